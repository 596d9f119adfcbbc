//! `teammem redact`

use std::io::Read;

use clap::Args;

use crate::domain::secrets;
use crate::ops::{EXIT_OK, OpError, Project};

/// Copy standard input to standard output with every detected secret replaced by
/// [REDACTED_SECRET].
///
/// Use it before text goes into a memory, a prompt or a log (as Codex redacts before and after
/// memory extraction). Input that is not UTF-8 is read with invalid bytes replaced; binary
/// input (a NUL byte in the first 8 KiB) is refused with exit status 2.
#[derive(Debug, Args)]
pub struct RedactArgs {
    /// Print JSON: {text, redactions} (the number of secrets replaced).
    #[arg(long)]
    json: bool,
    /// `--format json` is the same as --json; `--format human` is the default.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    format: Option<super::TextFormat>,
}

/// Runs `teammem redact`; returns its exit status.
pub fn run(_project: &Project, args: RedactArgs) -> Result<u8, OpError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| OpError::Usage(format!("cannot read standard input: {e}")))?;
    let Some(text) = secrets::decode_text(&bytes) else {
        return Err(OpError::Usage(
            "standard input looks binary (it holds a NUL byte) — redact text only".into(),
        ));
    };
    let redacted = secrets::redact_text(&text);
    if super::json_wanted(args.json, args.format) {
        let marker = "[REDACTED_SECRET]";
        let redactions = redacted.matches(marker).count() - text.matches(marker).count();
        super::print_json(&serde_json::json!({ "text": redacted, "redactions": redactions }))?;
        return Ok(EXIT_OK);
    }
    super::ui::out_bytes(redacted.as_bytes());
    Ok(EXIT_OK)
}
