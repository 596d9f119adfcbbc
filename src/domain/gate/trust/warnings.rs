//! Risks a memory only shows, moved to warning rules: a known installer piped into a shell,
//! an attack quoted as an example in a memory about attacks.

use super::links::{URL, host_allowed, host_of};
use super::patterns::PATTERN_RULES;
use super::{
    COMMAND, ENCODED_PAYLOAD, HIDDEN_COMMENT, KNOWN_INSTALLER, QUOTED_ATTACK, ROLE_MARKER, Risk,
};

/// Hosts whose install scripts are meant to be piped into a shell (`curl … | sh`): a memory
/// that documents one is reported as [`KNOWN_INSTALLER`], not withheld. An entry with a `/`
/// allows that path prefix only (a host that serves anyone's files).
pub const KNOWN_INSTALLER_HOSTS: &[&str] = &[
    "sh.rustup.rs",
    "static.rust-lang.org",
    "get.docker.com",
    "install.python-poetry.org",
    "astral.sh",
    "bun.sh",
    "deno.land",
    "get.pnpm.io",
    "raw.githubusercontent.com/homebrew/",
    "raw.githubusercontent.com/nvm-sh/",
    "nixos.org",
    "install.determinate.systems",
    "get.helm.sh",
    "get.sdkman.io",
    "starship.rs",
    "fnm.vercel.app",
    "deb.nodesource.com",
    "rpm.nodesource.com",
    "get.k3s.io",
    "ollama.com",
    "tailscale.com",
    "sh.vector.dev",
    "get.volta.sh",
    "mise.run",
    "pyenv.run",
];

/// Words that make a quoted risk an example a memory warns about, not an order it gives.
const SECURITY_WORDS: &[&str] = &[
    "injection",
    "attack",
    "malicious",
    "jailbreak",
    "phishing",
    "payload",
    "exploit",
    "red team",
    "red-team",
    "adversar",
    "threat",
    "incident",
    "cve-",
    "never follow",
    "do not follow",
    "don't follow",
    "never run",
    "do not run",
    "don't run",
    "inyección",
    "ataque",
    "injeção",
    "attaque",
    "angriff",
    "атак",
    "инъекц",
    "注入",
    "攻击",
    "攻撃",
    "インジェクション",
    "공격",
    "인젝션",
];

/// Moves a pattern risk to a warning rule when the memory only shows it: a download piped
/// into a shell from a known installer ([`KNOWN_INSTALLER`]); text in a fenced block, an
/// inline code span, quotes or a block quote of a memory that speaks of attacks, or a role
/// label in a fenced transcript ([`QUOTED_ATTACK`]). An [`ENCODED_PAYLOAD`] finding stays
/// only when the text holds encoded text or names a cipher ([`holds_encoding`]).
pub(super) fn downgrade(text: &str, allowed_hosts: &[String], risks: &mut Vec<Risk>) {
    if risks.is_empty() {
        return;
    }
    if risks.iter().any(|r| r.rule == ENCODED_PAYLOAD) && !holds_encoding(text) {
        risks.retain(|r| r.rule != ENCODED_PAYLOAD);
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let fenced = fenced_lines(&lines);
    let lower = text.to_lowercase();
    // The words must stand in prose: a payload cannot vouch for itself from inside its block.
    let prose: String = lower
        .split('\n')
        .zip(&fenced)
        .filter(|&(_, &fence)| !fence)
        .map(|(line, _)| line)
        .collect::<Vec<_>>()
        .join("\n");
    let security = SECURITY_WORDS.iter().any(|w| prose.contains(w));
    let install = ["install", "set up", "setup", "bootstrap"]
        .iter()
        .any(|w| lower.contains(w));
    for risk in risks.iter_mut() {
        let shown = PATTERN_RULES.iter().any(|p| p.0 == risk.rule) || risk.rule == HIDDEN_COMMENT;
        if !shown {
            continue;
        }
        let at = risk.line.saturating_sub(1);
        let line = lines.get(at).copied().unwrap_or("");
        let in_fence = fenced.get(at).copied().unwrap_or(false);
        if risk.rule == COMMAND
            && installs_known(line, &risk.matched, allowed_hosts, in_fence && install)
        {
            risk.rule = KNOWN_INSTALLER;
            continue;
        }
        let quoted = in_fence
            || line.trim_start().starts_with('>')
            || quoted_at(line, risk.column.saturating_sub(1));
        if quoted && (security || (risk.rule == ROLE_MARKER && in_fence)) {
            risk.rule = QUOTED_ATTACK;
        }
    }
    risks.sort_by(|a, b| (a.line, a.column, a.rule).cmp(&(b.line, b.column, b.rule)));
    risks.dedup_by(|a, b| a.rule == b.rule && a.line == b.line);
}

/// For each line, whether it sits in a fenced code block (its fences included).
fn fenced_lines(lines: &[&str]) -> Vec<bool> {
    let mut open = false;
    lines
        .iter()
        .map(|line| {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                open = !open;
                return true;
            }
            open
        })
        .collect()
}

/// Whether the character at `column` (0-based) of `line` is inside an inline code span or
/// quotation marks: an odd number of backticks or straight double quotes before it, more
/// single quotes that open (after a non-letter) than close (before one), or more opening than
/// closing curly, angle or corner quotes.
fn quoted_at(line: &str, column: usize) -> bool {
    let before: Vec<char> = line.chars().take(column + 1).collect();
    let count = |c: char| before.iter().take(column).filter(|&&b| b == c).count();
    let word = |at: Option<usize>| {
        at.and_then(|i| before.get(i))
            .is_some_and(|c| c.is_alphanumeric())
    };
    let (mut opens, mut closes) = (0, 0);
    for (at, &c) in before.iter().enumerate().take(column) {
        if c == '\'' {
            match (word(at.checked_sub(1)), word(Some(at + 1))) {
                (false, true) => opens += 1,
                (true, false) => closes += 1,
                _ => {}
            }
        }
    }
    count('`') % 2 == 1
        || count('"') % 2 == 1
        || opens > closes
        || count('“') > count('”')
        || count('«') > count('»')
        || count('「') > count('」')
}

/// Whether a download piped into a shell (`matched`, on `line`) fetches only from known
/// installers — or, when `documented` (a fenced block of a memory about installing), from
/// allowed hosts.
fn installs_known(line: &str, matched: &str, allowed_hosts: &[String], documented: bool) -> bool {
    let lower = matched.to_ascii_lowercase();
    if !["curl", "wget", "iwr", "invoke-webrequest"]
        .iter()
        .any(|w| lower.contains(w))
    {
        return false;
    }
    let Some(url) = &*URL else { return false };
    let mut any = false;
    for caps in url.captures_iter(line.as_bytes()) {
        let (Some(whole), Some(authority)) = (caps.get(0), caps.get(1)) else {
            return false;
        };
        let host = host_of(&String::from_utf8_lossy(authority.as_bytes()));
        let rest = line
            .get(whole.end()..)
            .unwrap_or("")
            .split(|c: char| c.is_whitespace() || c == '|' || c == ')')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let at = format!("{host}{rest}");
        let known = KNOWN_INSTALLER_HOSTS
            .iter()
            .any(|entry| match entry.contains('/') {
                true => at.starts_with(entry),
                false => host == *entry || host.ends_with(&format!(".{entry}")),
            });
        if !(known || documented && host_allowed(&host, allowed_hosts)) {
            return false;
        }
        any = true;
    }
    any
}

/// Whether `text` holds encoded text a decode-and-obey order could mean: a base64 run of 16
/// or more characters mixing letters and digits, 16 hex digits or 8 hex bytes in a row,
/// `\x` escapes, or the name of a cipher (rot13, Caesar).
fn holds_encoding(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    if ["rot13", "rot-13", "rot 13", "caesar", "\\x"]
        .iter()
        .any(|w| lower.contains(w))
    {
        return true;
    }
    let base64 = |t: &str| {
        t.len() >= 16
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=_-".contains(&b))
            && t.bytes().any(|b| b.is_ascii_alphabetic())
            && (t.bytes().any(|b| b.is_ascii_digit()) || t.ends_with('='))
    };
    let hex = |t: &str| t.len() >= 16 && t.bytes().all(|b| b.is_ascii_hexdigit());
    let mut pairs = 0;
    for token in
        text.split(|c: char| !c.is_ascii() || c.is_whitespace() || "\"'`()[]<>:,;".contains(c))
    {
        if base64(token) || hex(token) {
            return true;
        }
        pairs = match token.len() == 2 && token.bytes().all(|b| b.is_ascii_hexdigit()) {
            true => pairs + 1,
            false => 0,
        };
        if pairs >= 8 {
            return true;
        }
    }
    false
}
