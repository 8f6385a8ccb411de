fn main() {
    std::process::exit(crosscheck::app::main());
}
