//! The `teammem` binary: the command line of [`teammem::cli`].

fn main() -> std::process::ExitCode {
    // The binary is also its own helper process for transfers and checkouts that must stop at
    // the sync's deadline (see `git/helper.rs`).
    if let Some(code) = teammem::git::serve_if_asked() {
        return code;
    }
    teammem::cli::main()
}
