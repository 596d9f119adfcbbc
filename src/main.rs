fn main() -> std::process::ExitCode {
    teammem::cli::main()
}
