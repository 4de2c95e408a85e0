#!/usr/bin/env bash
# A throwaway PostgreSQL server for the PostgreSQL store's tests: on 127.0.0.1 only, in a
# temporary data directory, with trust authentication for its own user and no password.
#
#   Scripts/postgres-server.sh start   # initdb (once) and start; prints the URL the tests use
#   Scripts/postgres-server.sh stop    # stop it and delete its data directory
#
# The tests read OPENCOREDATA_POSTGRES_URL, which defaults to the URL this script prints.
# The server also accepts TLS, with a self-signed certificate for 127.0.0.1 and localhost made
# at start; the TLS tests trust it through $data/server.crt (OPENCOREDATA_POSTGRES_CA).
# PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user that
# Debian's package creates.
set -euo pipefail
port="${OPENCOREDATA_POSTGRES_PORT:-54329}"
data="${OPENCOREDATA_POSTGRES_DATA:-${TMPDIR:-/tmp}/opencoredata-postgres-$port}"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
[ -n "$bin" ] || bin="$(dirname "$(command -v pg_ctl)")"

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
    if [ ! -f "$data/PG_VERSION" ]; then
        mkdir -p "$data"
        [ "$(id -u)" = 0 ] && chown postgres "$data"
        as_owner "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
    fi
    if [ ! -f "$data/server.crt" ]; then
        openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=localhost" \
            -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
            -keyout "$data/server.key" -out "$data/server.crt" >/dev/null 2>&1
        chmod 600 "$data/server.key"
        [ "$(id -u)" = 0 ] && chown postgres "$data/server.key" "$data/server.crt"
    fi
    if ! as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        as_owner "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w \
            -o "-h 127.0.0.1 -p $port -k $data -c max_connections=200 -c fsync=off -c ssl=on -c ssl_cert_file=$data/server.crt -c ssl_key_file=$data/server.key" \
            start >/dev/null
    fi
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
stop)
    if [ -f "$data/PG_VERSION" ]; then
        as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
        rm -rf "$data"
    fi
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
