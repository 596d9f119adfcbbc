#!/usr/bin/env bash
# Benchmark a no-op `teammem sync` in branch mode (the team memory on the `team-memory` branch)
# against current-branch mode and against the git CLI doing the same job — fetch the one branch,
# compare its tip with the local one (`git rev-parse`), `git diff --quiet` of the team folder —
# on a small repository (100 files) and a big one (100,000 files), over file://, over git://
# (a local git daemon) and over smart http:// (`git http-backend` as CGI). Prints hyperfine's
# tables, then the ratios (mean wall time, and mean user+system CPU time, which the machine's
# load disturbs less).
#
# The http transports, each serving `git http-backend` as its man page documents:
#   lighttpd  lighttpd's mod_cgi;
#   apache    Apache's mod_cgi (prefork MPM);
#   nginx     nginx with fcgiwrap (FastCGI; fcgiwrap starts the CGI per request);
#   http      a stdlib Python HTTP/1.1 host (the script's first http server). It passes no
#             `Git-Protocol` header to the backend, so the git CLI falls back to protocol v0
#             and its no-op fetch is one GET; behind the three web servers (as behind any
#             real host) the git CLI speaks its default v2: a GET, then a POST (ls-refs).
#             teammem's fast no-op is one v0 GET behind all four.
# Every one of them starts `git http-backend` (and it `git upload-pack`) per request.
#
# Usage: scripts/bench-sync-branch.sh [WORKDIR]
#   RUNS=20 (hyperfine runs), ROUNDS=1 (RUNS split into that many hyperfine runs in turn, their
#   times pooled: on a loaded machine, ROUNDS=5 spreads a burst of load over every command),
#   BIG=100000 (files of the big repository), SIZES="small big",
#   TRANSPORTS="file git http lighttpd" (any of file git http lighttpd apache nginx),
#   BIN=path (the teammem measured; default: build the release binary, in $CARGO_TARGET_DIR
#   when set), OLD_BIN=path (an older teammem measured side by side on the same clones, e.g.
#   the session's start binary; its rows are left out when unset).
#   CHANGE and FLOOD (below) choose the other two benchmarks.
# Needs hyperfine, git, jq; python3, lighttpd, apache2, nginx and fcgiwrap for their transports.
# Goals (issue 11): branch mode <= 0.3x the git CLI; the big repository costs branch mode no
# more than the small one (it never walks the work tree outside the folder).
#
# FLOOD="1000 10000 50000" measures instead branch-mode session start with that many memories
# on the memory branch (issue 37): for each count, a remote whose `team-memory` holds them
# (made with `git fast-import`, as a teammate's plain `git push`), a fresh clone with a memory
# of its own, then `teammem session-start --hook claude` run RUNS times in a row (the first
# materialises up to the limit within the budget, the later ones go on from there). With
# OLD_BIN set, the old binary gets a fresh clone of its own from the same remote and the two
# take turns, run by run, so a burst of load falls on both. Prints each run's wall time,
# whether the context was printed, the files in the folder and whether the clone's own memory
# reached the remote.
#
# CHANGE="1000 10000 50000" measures instead a branch-mode `teammem sync` where little changed
# (issue 37): for each count, a remote whose `team-memory` holds that many memories, a clone
# synced once per binary, and a teammate (the git CLI). Before each timed run the teammate
# edits one memory and pushes it, and the user edits another in the folder; the sync then
# fetches, records, re-creates the record on the teammate's tip, pushes and writes the folder.
# Each run's wall time is printed (setup not timed), then per binary the median; with OLD_BIN
# set the two binaries take turns run by run (each on its own clone of the same remote) and the
# new/old ratio of the medians is printed. A third row (unless GIT_ROW=0) is the git CLI doing
# the same job by turns on a clone of the memory branch — `git add` + `commit`, `pull --rebase`,
# `push` — with the new/git ratio: one memory changed in a folder of N costs git a rewrite of
# that folder's tree too, so this row shows what the branch's size costs git itself.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
runs=${RUNS:-20}
rounds=${ROUNDS:-1}
big=${BIG:-100000}
sizes=${SIZES:-small big}
target=${CARGO_TARGET_DIR:-$root/target}
mkdir -p "$work"
work=$(cd "$work" && pwd)
if [ -n "${BIN:-}" ]; then
  teammem=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
else
  cargo build --release --quiet --manifest-path "$root/Cargo.toml"
  teammem="$target/release/teammem"
fi
old_bin=${OLD_BIN:-}
team=.qwen/team-memory
if ! "$teammem" init --help | grep -q -- '--branch'; then
  echo "this teammem has no branch mode (teammem init --branch); nothing to measure" >&2
  exit 2
fi

# Isolated git configuration: nothing from the caller's own config (hooks, fsmonitor, signing).
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$work/home/.gitconfig"
mkdir -p "$HOME"
# No auto gc: a detached one still writing into the seed made its `rm -rf` fail at load 15.
printf '[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n[gc]\n\tauto = 0\n' >"$GIT_CONFIG_GLOBAL"

if [ -n "${FLOOD:-}" ]; then
  for count in $FLOOD; do
    dir="$work/flood-$count"
    rm -rf "$dir"
    mkdir -p "$dir"
    git init -q --bare "$dir/remote.git"
    git clone -q "$dir/remote.git" "$dir/seed" 2>/dev/null
    (
      cd "$dir/seed"
      echo '# project' >README.md
      git add -A && git commit -qm initial && git push -q origin main
      "$teammem" init --branch >/dev/null
      "$teammem" sync --json >/dev/null || true
      git fetch -q origin team-memory
      tip=$(git rev-parse FETCH_HEAD)
      {
        printf 'commit refs/heads/flood\ncommitter Flood <flood@example.com> 0 +0000\ndata 6\nflood\nfrom %s\n' "$tip"
        for n in $(seq 1 "$count"); do
          text=$(printf -- '---\nname: flood %s\ndescription: Flood %s\ntype: project\n---\nFlooded.\n' "$n" "$n")
          printf 'M 100644 inline %s/project/flood-%06d.md\ndata %s\n%s\n' "$team" "$n" "$(( ${#text} + 1 ))" "$text"
        done
      } | git fast-import --quiet
      git push -q origin refs/heads/flood:refs/heads/team-memory
    )
    binaries=("new=$teammem")
    [ -z "$old_bin" ] || binaries+=("old=$old_bin")
    for entry in "${binaries[@]}"; do
      label=${entry%%=*}
      git clone -q "$dir/remote.git" "$dir/me-$label" 2>/dev/null
      mkdir -p "$dir/me-$label/$team/feedback"
      printf -- '---\nname: mine %s\ndescription: My own memory\ntype: feedback\n---\nMine.\n' "$label" \
        >"$dir/me-$label/$team/feedback/mine-$label.md"
    done
    for run in $(seq 1 "$runs"); do
      for entry in "${binaries[@]}"; do
        label=${entry%%=*} bin=${entry#*=}
        me="$dir/me-$label"
        start=$(date +%s.%N)
        out=$(cd "$me" && echo '{"source":"startup"}' | "$bin" session-start --hook claude 2>/dev/null || true)
        end=$(date +%s.%N)
        files=$(find "$me/$team" -type f | wc -l)
        pushed=no
        [ -n "$(git --git-dir="$dir/remote.git" ls-tree --name-only team-memory "$team/feedback/mine-$label.md")" ] && pushed=yes
        context=no
        [ -n "$out" ] && context=yes
        printf 'memories=%s binary=%s run=%s wall=%.2fs context=%s files=%s own-memory-pushed=%s\n' \
          "$count" "$label" "$run" "$(echo "$end - $start" | bc)" "$context" "$files" "$pushed"
      done
    done
  done
  exit 0
fi

if [ -n "${CHANGE:-}" ]; then
  for count in $CHANGE; do
    dir="$work/change-$count"
    rm -rf "$dir"
    mkdir -p "$dir"
    git init -q --bare "$dir/remote.git"
    git clone -q "$dir/remote.git" "$dir/seed" 2>/dev/null
    (
      cd "$dir/seed"
      echo '# project' >README.md
      git add -A && git commit -qm initial && git push -q origin main
      "$teammem" init --branch >/dev/null
      "$teammem" sync --json >/dev/null || true
      git fetch -q origin team-memory
      tip=$(git rev-parse FETCH_HEAD)
      {
        printf 'commit refs/heads/flood\ncommitter Flood <flood@example.com> 0 +0000\ndata 6\nflood\nfrom %s\n' "$tip"
        for n in $(seq 1 "$count"); do
          text=$(printf -- '---\nname: memory %s\ndescription: Memory %s\ntype: project\n---\nKept.\n' "$n" "$n")
          printf 'M 100644 inline %s/project/m-%06d.md\ndata %s\n%s\n' "$team" "$n" "$(( ${#text} + 1 ))" "$text"
        done
      } | git fast-import --quiet
      git push -q origin refs/heads/flood:refs/heads/team-memory
    )
    git clone -q --branch team-memory "$dir/remote.git" "$dir/mate" 2>/dev/null
    binaries=("new=$teammem")
    [ -z "$old_bin" ] || binaries+=("old=$old_bin")
    # The git CLI doing the same job on a clone of the memory branch: commit the user's edit,
    # `pull --rebase` the teammate's, push (it neither gates nor rewrites MEMORY.md).
    [ "${GIT_ROW:-1}" = 0 ] || binaries+=("git=git")
    for entry in "${binaries[@]}"; do
      label=${entry%%=*} bin=${entry#*=}
      if [ "$label" = git ]; then
        git clone -q --branch team-memory "$dir/remote.git" "$dir/me-git" 2>/dev/null
        continue
      fi
      git clone -q "$dir/remote.git" "$dir/me-$label" 2>/dev/null
      # The first syncs materialise the branch (past the folder's default limits, the rest is
      # kept out as on any sync): not timed.
      for _ in 1 2 3; do (cd "$dir/me-$label" && "$bin" sync --json >/dev/null 2>&1) || true; done
    done
    declare -A walls=()
    for run in $(seq 1 "$runs"); do
      for entry in "${binaries[@]}"; do
        label=${entry%%=*} bin=${entry#*=}
        me="$dir/me-$label"
        # The teammate changes one memory and pushes it (plain git), the user changes another.
        n=$(( (run * 7919) % count + 1 ))
        (
          cd "$dir/mate" && git pull -q --rebase origin team-memory 2>/dev/null
          printf 'Edited by the teammate, run %s %s.\n' "$run" "$label" >>"$(printf '%s/project/m-%06d.md' "$team" "$n")"
          git commit -qam "teammate edit" && git push -q origin HEAD:team-memory
        )
        # One the folder holds (past the default limit of 5,000 the rest is kept out), not the
        # one the other binary's clone edits: each sync has its own change to record and push.
        shift=0
        case $label in old) shift=$(( count < 4000 ? count / 2 : 2000 )) ;; git) shift=$(( count < 4000 ? count / 4 : 1000 )) ;; esac
        m=$(( (run * 104729 + 1 + shift) % (count < 4000 ? count : 4000) + 1 ))
        printf 'Edited by me (%s), run %s.\n' "$label" "$run" >>"$(printf '%s/%s/project/m-%06d.md' "$me" "$team" "$m")"
        start=$(date +%s.%N)
        if [ "$label" = git ]; then
          out=$(cd "$me" && git add -A "$team" && git commit -qm "my edit" && git pull -q --rebase \
            && git push -q origin HEAD:team-memory && echo '{"pushed": true}' || echo '{"pushed": false}')
        else
          out=$(cd "$me" && "$bin" sync --json 2>/dev/null || true)
        fi
        end=$(date +%s.%N)
        wall=$(echo "$end - $start" | bc)
        walls[$label]+="$wall "
        printf 'memories=%s binary=%s run=%s wall=%.3fs pushed=%s skipped=%s\n' "$count" "$label" "$run" \
          "$wall" "$(jq -r '.pushed' <<<"$out" 2>/dev/null)" "$(jq -r '.skipped_reason // "-"' <<<"$out" 2>/dev/null)"
      done
    done
    median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
    new_median=$(median <<<"${walls[new]}")
    printf 'memories=%s median new=%.3fs' "$count" "$new_median"
    if [ -n "$old_bin" ]; then
      old_median=$(median <<<"${walls[old]}")
      printf ' old=%.3fs new/old=%.2f' "$old_median" "$(echo "$new_median / $old_median" | bc -l)"
    fi
    if [ -n "${walls[git]:-}" ]; then
      git_median=$(median <<<"${walls[git]}")
      printf ' git=%.3fs new/git=%.2f' "$git_median" "$(echo "$new_median / $git_median" | bc -l)"
    fi
    printf '\n'
    unset walls
  done
  exit 0
fi

rm -rf "$work/srv"
mkdir -p "$work/srv"
port=$((20000 + RANDOM % 20000))
git daemon --reuseaddr --export-all --enable=receive-pack --listen=127.0.0.1 --port="$port" \
  --base-path="$work/srv" "$work/srv" >/dev/null 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
# Smart HTTP: `git http-backend` as CGI behind a tiny HTTP/1.1 host from Python's stdlib.
hport=$((port + 1))
cat >"$work/http-host.py" <<'PY'
import http.server, os, subprocess, sys

class Git(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def run(self):
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = dict(os.environ, GIT_PROJECT_ROOT=sys.argv[2], GIT_HTTP_EXPORT_ALL="1",
                   REQUEST_METHOD=self.command, PATH_INFO=path, QUERY_STRING=query,
                   CONTENT_LENGTH=str(len(body)), REMOTE_ADDR="127.0.0.1",
                   CONTENT_TYPE=self.headers.get("Content-Type") or "")
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = "200 OK"
        headers = []
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = value.strip()
            elif name:
                headers.append((name, value.strip()))
        code, _, reason = status.partition(" ")
        self.send_response(int(code), reason)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = run

http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Git).serve_forever()
PY
transports=${TRANSPORTS:-file git http lighttpd}
servers=("$daemon")
trap 'kill "${servers[@]}" 2>/dev/null || true' EXIT
wait_port() { # PORT NAME
  for _ in $(seq 1 50); do (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return; sleep 0.1; done
  echo "$2 did not start on 127.0.0.1:$1" >&2
  exit 2
}
has() { case " $transports " in *" $1 "*) return 0 ;; esac; return 1; }
if has http; then
  python3 "$work/http-host.py" "$hport" "$work/srv" >/dev/null 2>&1 &
  servers+=($!)
  wait_port "$hport" "the Python http host"
fi

# The web servers run `git http-backend` under /git/ as git's documentation shows, with the
# bench's isolated git configuration (plus `safe.directory` for Apache, whose CGI runs as
# www-data on repositories this user owns).
backend="$(git --exec-path)/git-http-backend"
printf '[safe]\n\tdirectory = *\n' >"$work/server.gitconfig"
chmod 755 "$work" "$work/srv"
lport=$((port + 2)) aport=$((port + 3)) nport=$((port + 4))
if has lighttpd; then
  mkdir -p "$work/lighttpd"
  cat >"$work/lighttpd/lighttpd.conf" <<CONF
server.modules = ( "mod_alias", "mod_setenv", "mod_cgi" )
server.document-root = "$work/srv"
server.bind = "127.0.0.1"
server.port = $lport
server.errorlog = "$work/lighttpd/error.log"
alias.url += ( "/git" => "$backend" )
\$HTTP["url"] =~ "^/git" {
  cgi.assign = ( "" => "" )
  setenv.add-environment = (
    "GIT_PROJECT_ROOT" => "$work/srv",
    "GIT_HTTP_EXPORT_ALL" => "",
    "GIT_CONFIG_NOSYSTEM" => "1",
    "GIT_CONFIG_GLOBAL" => "$work/server.gitconfig",
    "HOME" => "$HOME"
  )
}
CONF
  lighttpd -D -f "$work/lighttpd/lighttpd.conf" >/dev/null 2>&1 &
  servers+=($!)
  wait_port "$lport" lighttpd
fi
if has apache; then
  mkdir -p "$work/apache"
  mods=/usr/lib/apache2/modules
  cat >"$work/apache/httpd.conf" <<CONF
ServerRoot "$work/apache"
ServerName 127.0.0.1
Listen 127.0.0.1:$aport
PidFile "$work/apache/httpd.pid"
ErrorLog "$work/apache/error.log"
LoadModule mpm_prefork_module $mods/mod_mpm_prefork.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule alias_module $mods/mod_alias.so
LoadModule env_module $mods/mod_env.so
LoadModule cgi_module $mods/mod_cgi.so
User www-data
Group www-data
DocumentRoot "$work/srv"
SetEnv GIT_PROJECT_ROOT "$work/srv"
SetEnv GIT_HTTP_EXPORT_ALL
SetEnv GIT_CONFIG_NOSYSTEM 1
SetEnv GIT_CONFIG_GLOBAL "$work/server.gitconfig"
SetEnv HOME "$HOME"
ScriptAlias /git/ "$backend/"
<Directory "$(dirname "$backend")">
  Require all granted
</Directory>
CONF
  # Each server in a session of its own, as a daemon would be: Apache's prefork signals its
  # whole process group when it stops, which was this script's.
  setsid apache2 -DFOREGROUND -f "$work/apache/httpd.conf" >/dev/null 2>&1 &
  servers+=($!)
  wait_port "$aport" apache2
fi
if has nginx; then
  mkdir -p "$work/nginx"
  rm -f "$work/nginx/fcgiwrap.sock"
  setsid fcgiwrap -s "unix:$work/nginx/fcgiwrap.sock" >/dev/null 2>&1 &
  servers+=($!)
  for _ in $(seq 1 50); do [ -S "$work/nginx/fcgiwrap.sock" ] && break; sleep 0.1; done
  cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
user root;
worker_processes 1;
pid $work/nginx/nginx.pid;
events {}
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  fastcgi_temp_path $work/nginx/fastcgi;
  proxy_temp_path $work/nginx/proxy;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  server {
    listen 127.0.0.1:$nport;
    location ~ ^/git(/.*) {
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME $backend;
      fastcgi_param PATH_INFO \$1;
      fastcgi_param GIT_PROJECT_ROOT $work/srv;
      fastcgi_param GIT_HTTP_EXPORT_ALL "";
      fastcgi_param GIT_CONFIG_NOSYSTEM 1;
      fastcgi_param GIT_CONFIG_GLOBAL $work/server.gitconfig;
      fastcgi_param HOME $HOME;
      fastcgi_pass unix:$work/nginx/fcgiwrap.sock;
    }
  }
}
CONF
  nginx -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" >/dev/null 2>&1 &
  servers+=($!)
  wait_port "$nport" nginx
fi

write_memories() { # DIR: ten team memories
  mkdir -p "$1/$team/project"
  for i in $(seq 1 10); do
    printf -- '---\nname: Memory %s\ndescription: What memory %s is about\ntype: project\n---\nBody.\n' \
      "$i" "$i" >"$1/$team/project/memory-$i.md"
  done
  "$teammem" -C "$1" index --scope team >/dev/null
}

# The git CLI doing what a no-op sync does: fetch one branch, compare tips, diff the folder.
# $2 is the branch fetched, $3 the local ref compared; GIT_INDEX_FILE may point at an index
# holding only the memory branch (branch mode: the folder is not in the work tree's index).
cat >"$work/git-job.sh" <<'SCRIPT'
#!/bin/sh
set -e
cd "$1"
[ -z "${4:-}" ] || export GIT_INDEX_FILE="$4"
git fetch -q origin "$2"
[ "$(git rev-parse -q --verify FETCH_HEAD)" = "$(git rev-parse -q --verify "$3")" ]
git diff --quiet -- .qwen/team-memory
SCRIPT
chmod +x "$work/git-job.sh"

setup() { # SIZE FILES: remotes SIZE-cb.git and SIZE-br.git, clones SIZE-cb and SIZE-br
  local size=$1 files=$2 seed="$work/seed-$1"
  rm -rf "$seed" "$work/$size-cb" "$work/$size-br"
  git init -q "$seed"
  local i=0
  while [ "$i" -lt "$files" ]; do
    local dir="$seed/src/d$((i / 1000))"
    [ -d "$dir" ] || mkdir -p "$dir"
    printf 'file %s\n' "$i" >"$dir/f$i.txt"
    i=$((i + 1))
  done
  git -C "$seed" add -A
  git -C "$seed" commit -q -m files
  for mode in cb br; do
    git init -q --bare "$work/srv/$size-$mode.git"
    git -C "$seed" push -q "$work/srv/$size-$mode.git" main
  done
  # Current-branch mode: the memories committed on main.
  write_memories "$seed"
  git -C "$seed" add -A
  git -C "$seed" commit -q -m memories
  git -C "$seed" push -q "$work/srv/$size-cb.git" main
  rm -rf "$seed"
  git clone -q "file://$work/srv/$size-cb.git" "$work/$size-cb"
  # Branch mode: main holds no memories; init --branch publishes them on team-memory.
  git clone -q "file://$work/srv/$size-br.git" "$work/$size-br"
  write_memories "$work/$size-br"
  "$teammem" -C "$work/$size-br" init --branch >/dev/null
  "$teammem" -C "$work/$size-br" sync >/dev/null || true
  git -C "$work/$size-br" rev-parse -q --verify refs/remotes/origin/team-memory >/dev/null
  # The git CLI's view of the memory branch's folder: an index of that branch alone.
  GIT_INDEX_FILE="$work/$size-br.index" git -C "$work/$size-br" read-tree refs/heads/team-memory
  GIT_INDEX_FILE="$work/$size-br.index" git -C "$work/$size-br" update-index -q --refresh || true
}

results=()
for size in $sizes; do
  files=100
  [ "$size" = big ] && files=$big
  echo "== $size repository: $files files, 10 team memories" >&2
  setup "$size" "$files"
  for transport in $transports; do
    for mode in cb br; do
      url="file://$work/srv/$size-$mode.git"
      [ "$transport" = git ] && url="git://127.0.0.1:$port/$size-$mode.git"
      [ "$transport" = http ] && url="http://127.0.0.1:$hport/$size-$mode.git"
      [ "$transport" = lighttpd ] && url="http://127.0.0.1:$lport/git/$size-$mode.git"
      [ "$transport" = apache ] && url="http://127.0.0.1:$aport/git/$size-$mode.git"
      [ "$transport" = nginx ] && url="http://127.0.0.1:$nport/git/$size-$mode.git"
      git -C "$work/$size-$mode" remote set-url origin "$url"
      # Warm: nothing left to commit, pull or push.
      "$teammem" -C "$work/$size-$mode" sync >/dev/null
      "$teammem" -C "$work/$size-$mode" sync --json | jq -e '.skipped_reason == null' >/dev/null
    done
    out="$work/$size-$transport.json"
    old_rows=()
    if [ -n "$old_bin" ]; then
      old_rows=(-n "branch mode, old binary" "$old_bin -C $work/$size-br sync")
    fi
    # ROUNDS hyperfine runs of RUNS/ROUNDS each, their times pooled: a burst of load from
    # other processes then falls on every command alike, not on whichever ran during it.
    for round in $(seq 1 "$rounds"); do
      hyperfine -N --warmup 3 --runs "$((runs / rounds))" --export-json "$out.$round" \
        -n "branch mode" "$teammem -C $work/$size-br sync" \
        "${old_rows[@]}" \
        -n "current-branch mode" "$teammem -C $work/$size-cb sync" \
        -n "git CLI, memory branch" \
        "$work/git-job.sh $work/$size-br team-memory refs/heads/team-memory $work/$size-br.index" \
        -n "git fetch alone, memory branch" "git -C $work/$size-br fetch -q origin team-memory" \
        -n "git CLI, current branch" "$work/git-job.sh $work/$size-cb main refs/remotes/origin/main" >&2
    done
    jq -s '{results: [range(0; .[0].results | length) as $i | [.[].results[$i]] | {
        command: .[0].command,
        times: [.[].times[]],
        user: (map(.user) | add / length),
        system: (map(.system) | add / length)}
      | .mean = (.times | add / length)
      | .median = (.times | sort | if length % 2 == 1 then .[length / 2 | floor]
          else (.[length / 2 - 1] + .[length / 2]) / 2 end)]}' \
      $(seq -f "$out.%g" 1 "$rounds") >"$out"
    jq -r '"| Command | Mean [ms] | Median [ms] | User + Sys [ms] |", "|:---|---:|---:|---:|",
      (.results[] | "| `\(.command)` | \(.mean * 1e4 | round / 10) | \(.median * 1e4 | round / 10) | \((.user + .system) * 1e4 | round / 10) |")' \
      "$out" >"$work/$size-$transport.md"
    results+=("$size $transport $out")
  done
done

echo
for row in "${results[@]}"; do
  read -r size transport out <<<"$row"
  echo "### $size repository, $transport"
  cat "$work/$size-$transport.md"
  jq -r '
    def m(n): (.results[] | select(.command == n));
    def cpu(n): (m(n).user + m(n).system);
    "branch mode / git CLI (memory branch):     wall \(m("branch mode").mean / m("git CLI, memory branch").mean * 1000 | round / 1000)x (medians \(m("branch mode").median / m("git CLI, memory branch").median * 1000 | round / 1000)x), cpu \(cpu("branch mode") / cpu("git CLI, memory branch") * 1000 | round / 1000)x",
    "current-branch / git CLI (current branch): wall \(m("current-branch mode").mean / m("git CLI, current branch").mean * 1000 | round / 1000)x, cpu \(cpu("current-branch mode") / cpu("git CLI, current branch") * 1000 | round / 1000)x",
    "branch mode / git fetch alone:             wall \(m("branch mode").mean / m("git fetch alone, memory branch").mean * 1000 | round / 1000)x, cpu \(cpu("branch mode") / cpu("git fetch alone, memory branch") * 1000 | round / 1000)x",
    "branch mode / current-branch mode:         wall \(m("branch mode").mean / m("current-branch mode").mean * 1000 | round / 1000)x",
    (if any(.results[]; .command == "branch mode, old binary") then
      "branch mode / old binary:                  wall \(m("branch mode").mean / m("branch mode, old binary").mean * 1000 | round / 1000)x (medians \(m("branch mode").median / m("branch mode, old binary").median * 1000 | round / 1000)x), cpu \(cpu("branch mode") / cpu("branch mode, old binary") * 1000 | round / 1000)x",
      "old binary / git CLI (memory branch):      wall \(m("branch mode, old binary").mean / m("git CLI, memory branch").mean * 1000 | round / 1000)x"
    else empty end)
  ' "$out"
  echo
done
for transport in $transports; do
  small="$work/small-$transport.json" bigj="$work/big-$transport.json"
  [ -f "$small" ] && [ -f "$bigj" ] || continue
  jq -r -n --slurpfile s "$small" --slurpfile b "$bigj" --arg t "$transport" '
    def m(r; n): (r[0].results[] | select(.command == n) | .mean);
    "big / small repository, \($t): branch mode \(m($b; "branch mode") / m($s; "branch mode") * 1000 | round / 1000)x, current-branch mode \(m($b; "current-branch mode") / m($s; "current-branch mode") * 1000 | round / 1000)x"'
done
