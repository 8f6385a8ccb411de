fn main() {
    std::process::exit(crosscheck::cli::main());
}
