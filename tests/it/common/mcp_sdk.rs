//! Driving `teammem mcp` with the official MCP Python SDK (tests/mcp_client.py) over stdio,
//! for the `tests/mcp_*.rs` files: the plan of calls goes in, the transcript comes out.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::common::Sandbox;

/// The MCP Python SDK version `.ci/install.d/30-mcp-python.sh` pins.
pub const MCP_SDK_VERSION: &str = "1.30.0";

/// The Python interpreter of the pinned MCP SDK's own virtual environment, by absolute path
/// (the sandbox replaces HOME, which version managers' shims need). The machine's own Python
/// is never used: an SDK of another major version there would change the client API.
pub fn python() -> &'static str {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = format!("/opt/teammem-clients/mcp-python-{MCP_SDK_VERSION}");
        let python = format!("{venv}/bin/python");
        let out = Command::new(&python)
            .args([
                "-c",
                "import importlib.metadata as m, mcp.client.stdio; print(m.version('mcp'))",
            ])
            .output();
        let found = match &out {
            Ok(out) if out.status.success() => {
                String::from_utf8_lossy(&out.stdout).trim().to_string()
            }
            _ => "nothing".to_string(),
        };
        assert_eq!(
            found, MCP_SDK_VERSION,
            "the MCP Python SDK {MCP_SDK_VERSION} is not installed in {venv} (found: {found}): \
             run .ci/run, or `bash .ci/install.d/30-mcp-python.sh`"
        );
        python
    })
}

/// A helper script of the test suite (`tests/NAME`), by absolute path.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

/// The environment the server gets: the sandbox's.
pub fn server_env(sb: &Sandbox) -> Value {
    json!({
        "PATH": std::env::var("PATH").unwrap_or_default(),
        "HOME": sb.home(),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": sb.home().join(".gitconfig"),
        "GIT_TERMINAL_PROMPT": "0",
        "QWEN_CODE_MEMORY_BASE_DIR": sb.base(),
        "LC_ALL": "C",
        "TZ": "UTC",
    })
}

/// Runs the steps against `teammem ARGS` in `dir` through the Python SDK; the transcript.
pub fn drive_with(sb: &Sandbox, dir: &Path, args: &[&str], steps: Value) -> Value {
    drive_command(sb, dir, env!("CARGO_BIN_EXE_teammem"), args, steps)
}

/// Runs the steps against `COMMAND ARGS` (a server as a client's configuration names it) in
/// `dir` through the Python SDK; the transcript.
pub fn drive_command(
    sb: &Sandbox,
    dir: &Path,
    command: &str,
    args: &[&str],
    steps: Value,
) -> Value {
    let plan = json!({
        "command": command,
        "args": args,
        "cwd": dir,
        "env": server_env(sb),
        "steps": steps,
    });
    let plan_path = sb.path().join("mcp-plan.json");
    fs::write(&plan_path, plan.to_string()).unwrap();
    let out = Command::new(python())
        .arg(script("mcp_client.py"))
        .arg(&plan_path)
        .stdin(Stdio::null())
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "the MCP client failed\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// [`drive_with`] `teammem mcp`.
pub fn drive(sb: &Sandbox, dir: &Path, steps: Value) -> Value {
    drive_with(sb, dir, &["mcp"], steps)
}

/// One tool call of a plan.
pub fn call(name: &str, arguments: Value) -> Value {
    json!({"call": name, "arguments": arguments})
}

/// The text of a call's result.
pub fn text(step: &Value) -> &str {
    step["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {step}"))
}

/// The text of a result that is not an error.
pub fn ok_text(step: &Value) -> &str {
    assert_eq!(step["is_error"], json!(false), "{step}");
    text(step)
}

/// The text of a refusal (a result marked as an error).
pub fn refused_text(step: &Value) -> &str {
    assert_eq!(step["is_error"], json!(true), "{step}");
    text(step)
}

/// The message of an MCP invalid-params error.
pub fn protocol_error(step: &Value) -> &str {
    assert_eq!(step["protocol_error"]["code"], json!(-32602), "{step}");
    step["protocol_error"]["message"].as_str().unwrap()
}

/// A `memory_save` call.
pub fn save(scope: &str, kind: &str, name: &str, body: &str) -> Value {
    call(
        "memory_save",
        json!({"scope": scope, "type": kind, "name": name,
               "description": format!("When {name} matters"), "body": body}),
    )
}
