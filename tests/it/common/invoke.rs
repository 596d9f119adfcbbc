//! Running `teammem` with what one test changes about its environment — variables set or
//! removed, and its standard input — and reading the JSON it prints: the set-up the CLI, scope,
//! sync and budget tests each had their own copy of.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::{Run, Sandbox};

/// A variable set (`Some`) or removed (`None`) on top of the sandbox's environment.
pub type EnvChange<'a> = (&'a str, Option<&'a str>);

/// Runs `teammem ARGS` in `dir` with the sandbox's environment changed by `env`, and `input`
/// on its standard input (`None`: an empty one).
pub fn teammem_with<I, S>(
    sb: &Sandbox,
    dir: &Path,
    args: I,
    env: &[EnvChange<'_>],
    input: Option<&str>,
) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teammem"));
    sb.isolate(&mut cmd).current_dir(dir).args(args);
    for (key, value) in env {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    let Some(input) = input else {
        return Run::from(cmd.stdin(Stdio::null()).output().expect("run teammem"));
    };
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run teammem");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    Run::from(child.wait_with_output().unwrap())
}

/// `env` as variables to set.
pub fn set<'a>(env: &[(&'a str, &'a str)]) -> Vec<EnvChange<'a>> {
    env.iter().map(|&(k, v)| (k, Some(v))).collect()
}

/// The JSON document `run` printed on stdout; the test fails showing both streams when it is
/// not JSON.
pub fn stdout_json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", run.stdout, run.stderr))
}
