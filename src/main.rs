//! The `teammem` binary: the command line of [`teammem::cli`].

fn main() -> std::process::ExitCode {
    teammem::cli::main()
}
