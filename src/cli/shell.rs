//! `teammem completions` and `teammem man`: generated from the clap definitions, so they list
//! exactly the commands and options this binary has.

use clap::{Args, CommandFactory, ValueEnum};

use super::Cli;
use crate::ops::{EXIT_OK, OpError};

/// Print a shell completion script on standard output.
///
/// bash: `source <(teammem completions bash)`, or save it as
/// ~/.local/share/bash-completion/completions/teammem. zsh: save it as `_teammem` in a folder
/// of $fpath. fish: save it as ~/.config/fish/completions/teammem.fish. PowerShell:
/// `teammem completions powershell | Out-String | Invoke-Expression`. elvish: `eval
/// (teammem completions elvish | slurp)`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: ShellArg,
}

/// A shell clap_complete writes completions for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ShellArg {
    /// GNU bash.
    Bash,
    /// Z shell.
    Zsh,
    /// fish.
    Fish,
    /// PowerShell.
    Powershell,
    /// elvish.
    Elvish,
}

/// Print the manual page (roff) on standard output: `teammem man | man -l -`.
///
/// The page lists every command; `teammem help COMMAND` prints a command's full help.
#[derive(Debug, Args)]
pub struct ManArgs {}

/// Runs `teammem completions`; returns its exit status.
pub fn completions(args: CompletionsArgs) -> Result<u8, OpError> {
    use clap_complete::Shell;
    let shell = match args.shell {
        ShellArg::Bash => Shell::Bash,
        ShellArg::Zsh => Shell::Zsh,
        ShellArg::Fish => Shell::Fish,
        ShellArg::Powershell => Shell::PowerShell,
        ShellArg::Elvish => Shell::Elvish,
    };
    let mut command = Cli::command();
    clap_complete::generate(shell, &mut command, "teammem", &mut super::ui::Stdout);
    Ok(EXIT_OK)
}

/// Runs `teammem man`; returns its exit status.
pub fn man(_args: ManArgs) -> Result<u8, OpError> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(|e| OpError::Usage(format!("cannot render the manual page: {e}")))?;
    super::ui::out_bytes(&page);
    Ok(EXIT_OK)
}
