#!/bin/bash
# pg-throwaway.sh — a disposable PostgreSQL cluster for tests and CI (docs/store.md).
#
#   pg-throwaway.sh start   [DIR]   create (first time) and start; prints the URL and the stop command
#   pg-throwaway.sh url     [DIR]   print the URL of a running cluster (exit 1 if not running)
#   pg-throwaway.sh stop    [DIR]   stop it (fast shutdown); the files stay for the next start
#   pg-throwaway.sh destroy [DIR]   stop it and delete DIR
#
# DIR defaults to $AXPIPE_PG_DIR or /tmp/axpipe-pg. Keep it short: the Unix socket lives in it
# and socket paths are limited to 107 bytes.
#
# As root, the server runs as the `postgres` system user (PostgreSQL refuses to run as root); as
# any other user it runs as that user. It listens on 127.0.0.1 only, on a free port chosen at
# creation, with scram-sha-256 password auth on TCP (a random password kept in DIR/url, mode 600)
# and peer auth on the socket. Durability against an OS crash is switched off for speed (fsync,
# full_page_writes): never point this at data you want to keep. synchronous_commit stays ON on
# purpose: with it off, an immediate server stop loses commits the client was told about (measured:
# 5-19 acknowledged claims lost per stop), which would make lost-connection tests double-run work.
#
# Safe to repeat: `start` on a running cluster just prints its URL again; on a stopped one it
# restarts it on the port recorded in its configuration. On a fresh Debian machine without the
# server binaries it runs `apt-get install -y postgresql` (root only) without creating or
# starting Debian's own "main" cluster.
set -euo pipefail
# runuser and useradd are root's tools in /usr/sbin, which a minimal PATH (env -i, cron,
# a CI runner) leaves out.
PATH="$PATH:/usr/sbin:/sbin"

cmd=${1:-start}
dir=${2:-${AXPIPE_PG_DIR:-/tmp/axpipe-pg}}
dbname=${AXPIPE_PG_DB:-axpipe}
dbuser=axpipe

die() { echo "pg-throwaway: $*" >&2; exit 1; }

find_bindir() {
    if [[ -n "${PG_BINDIR:-}" ]]; then echo "$PG_BINDIR"; return; fi
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
    [[ -n "$d" && -x "$d/initdb" ]] && echo "$d"
}

install_server() {
    [[ $EUID -eq 0 ]] || die "PostgreSQL server binaries not found; install them: sudo apt-get install -y postgresql"
    command -v apt-get >/dev/null || die "PostgreSQL server binaries not found and apt-get is not available"
    echo "pg-throwaway: installing postgresql with apt-get (once per machine)" >&2
    # Tell postgresql-common not to create and start its own cluster on port 5432.
    mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/axpipe-no-main.conf
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2 ||
        { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2; } ||
        die "apt-get install postgresql failed"
}

bindir=$(find_bindir || true)
if [[ -z "$bindir" ]]; then
    [[ "$cmd" == start ]] || die "no PostgreSQL binaries under /usr/lib/postgresql/*/bin (set PG_BINDIR)"
    install_server
    bindir=$(find_bindir) || die "PostgreSQL installed but no initdb under /usr/lib/postgresql/*/bin"
fi

if [[ $EUID -eq 0 ]]; then
    owner=postgres
    getent passwd "$owner" >/dev/null ||
        useradd --system --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin "$owner"
    as_owner() { runuser -u "$owner" -- "$@"; }
else
    owner=$(id -un)
    as_owner() { "$@"; }
fi

data="$dir/data"
# One caller at a time per DIR (parallel test workers may all call `start`).
exec 9>"$dir.lock"
flock 9
urlfile="$dir/url"
self=$(readlink -f "$0")

running() { [[ -f "$data/PG_VERSION" ]] && as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; }

print_url() {
    [[ -r "$urlfile" ]] || die "$urlfile missing: not a cluster made by this script"
    echo "AXPIPE_TEST_PG_URL=$(cat "$urlfile")"
    echo "stop: $self stop $dir"
}

free_port() {
    python3 - <<'EOF'
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
EOF
}

create() {
    (( ${#dir} <= 90 )) || die "DIR too long for a Unix socket path (${#dir} > 90): $dir"
    if [[ -e "$dir" ]]; then
        [[ -z "$(ls -A "$dir")" ]] || die "$dir exists and is not a cluster made by this script; remove it or pick another DIR"
    fi
    mkdir -p "$dir"
    [[ $EUID -eq 0 ]] && chown "$owner": "$dir"
    chmod 700 "$dir"
    as_owner test -w "$dir" || die "user $owner cannot write $dir (a parent folder is not searchable?)"
    local port pw pwfile
    port=$(free_port)
    pw=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
    pwfile="$dir/.pw"
    ( umask 077; echo "$pw" > "$pwfile" ); [[ $EUID -eq 0 ]] && chown "$owner": "$pwfile"
    as_owner "$bindir/initdb" -D "$data" -U "$dbuser" --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 \
        --auth-local=peer --auth-host=scram-sha-256 --no-sync >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; die "initdb failed (log: $dir/initdb.log)"; }
    rm -f "$pwfile"
    # peer auth maps the OS user to the role of the same name; let the owner log in as $dbuser.
    echo "owner $owner $dbuser" >> "$data/pg_ident.conf"
    sed -i "s/^local\(.*\)peer\$/local\1peer map=owner/" "$data/pg_hba.conf"
    as_owner tee -a "$data/postgresql.conf" >/dev/null <<EOF
# --- pg-throwaway: test cluster, durability off ---
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
fsync = off
full_page_writes = off
wal_level = minimal
max_wal_senders = 0
max_connections = 200
shared_buffers = 128MB
logging_collector = off
log_min_messages = warning
EOF
    ( umask 077; echo "postgresql://$dbuser:$pw@127.0.0.1:$port/$dbname" > "$urlfile" )
}

start() {
    if running; then print_url; return; fi
    [[ -f "$data/PG_VERSION" ]] || create
    local port
    port=$(sed -n "s/^port = \([0-9]*\)$/\1/p" "$data/postgresql.conf" | tail -n1)
    # 9>&-: the server must not inherit the lock, or it would hold it for its whole life.
    as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 30 start >/dev/null 9>&- ||
        { tail -n 20 "$dir/server.log" >&2; die "server did not start on port $port (log: $dir/server.log)"; }
    if ! as_owner "$bindir/psql" -h "$dir" -p "$port" -U "$dbuser" -d postgres -Atqc \
            "SELECT 1 FROM pg_database WHERE datname = '$dbname'" | grep -q 1; then
        as_owner "$bindir/createdb" -h "$dir" -p "$port" -U "$dbuser" "$dbname"
    fi
    print_url
}

case "$cmd" in
    start) start ;;
    url) running || die "no cluster running in $dir"; print_url ;;
    stop)
        if running; then as_owner "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null; fi
        echo "pg-throwaway: stopped ($dir)" ;;
    destroy)
        if running; then as_owner "$bindir/pg_ctl" -D "$data" -m immediate -w stop >/dev/null; fi
        if [[ -f "$urlfile" || ! -e "$dir" ]]; then rm -rf "$dir" "$dir.lock"; echo "pg-throwaway: removed $dir"
        else die "$dir has no $urlfile: not removing a folder this script did not make"; fi ;;
    *) die "usage: $0 start|url|stop|destroy [DIR]" ;;
esac
