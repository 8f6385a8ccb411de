// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Bundled example: a vault with an owner check done the wrong way (tx.origin).
contract Vault {
    address public owner;
    mapping(address => uint256) public balances;

    modifier onlyOwner() {
        require(tx.origin == owner, "not owner");
        _;
    }

    constructor() {
        owner = msg.sender;
    }

    function deposit() external payable {
        require(msg.value > 0, "empty deposit");
        balances[msg.sender] += msg.value;
    }

    function withdraw(uint256 amount) external {
        uint256 bal = balances[msg.sender];
        if (amount > bal) {
            revert("insufficient");
        }
        balances[msg.sender] = bal - amount;
        (bool ok, ) = msg.sender.call{value: amount}("");
        require(ok, "transfer failed");
    }

    function sweep(address payable to) external onlyOwner {
        for (uint256 i = 0; i < 3; i++) {
            if (address(this).balance == 0) {
                break;
            }
        }
        to.transfer(address(this).balance);
    }
}
