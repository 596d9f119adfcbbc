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
pub struct RedactArgs {}

/// Runs `teammem redact`; returns its exit status.
pub fn run(_project: &Project, _args: RedactArgs) -> Result<u8, OpError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| OpError::Usage(format!("cannot read standard input: {e}")))?;
    let Some(text) = secrets::decode_text(&bytes) else {
        return Err(OpError::Usage(
            "standard input looks binary (it holds a NUL byte) — redact text only".into(),
        ));
    };
    super::ui::out_bytes(secrets::redact_text(&text).as_bytes());
    Ok(EXIT_OK)
}
