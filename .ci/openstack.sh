#!/usr/bin/env bash
# A small real OpenStack on loopback for Berth's tests and demos (Debian; root in CI):
# Keystone, Placement and Nova (API, conductor, scheduler, fake computes) on MariaDB and
# RabbitMQ, and Blazar on demand. Versions are pinned in .ci/openstack/ (requirements.txt,
# constraints.txt); the venv lives in target/openstack/venv and is reused while the pins stay.
# Glance and Neutron are mocks (.ci/openstack/standins.py): Nova needs an image record and a
# network API that answers, nothing of them matters for placement.
#
#   eval "$(bash .ci/openstack.sh start)"  # install if needed, start, print the exports below
#   bash .ci/openstack.sh start-blazar     # add Blazar (API under gunicorn, manager, freepool)
#   bash .ci/openstack.sh env              # print the exports of the running cloud again
#   bash .ci/openstack.sh smoke            # token, providers, a boot with its allocation, a delete
#   bash .ci/openstack.sh status           # each process with its PID, CPU seconds and RSS
#   bash .ci/openstack.sh stop             # stop every process (epmd too), delete the data
#   bash .ci/openstack.sh install          # only the venv (kept in target/openstack while the pins hold)
#   bash .ci/openstack.sh start --background; ...; bash .ci/openstack.sh wait
#                                          # exports at once, bring-up behind; `wait` blocks
#                                          # until ready or prints why it failed
#   bash .ci/openstack.sh freeze           # re-resolve requirements.txt into constraints.txt
#
# Settings (environment):
#   BERTH_OS_COMPUTES   fake hosts NAME:VCPUS:MEMORY_MB:DISK_GB, space separated
#                       (default "cpu1:8:16384:200 cpu2:4:8192:100")
#   BERTH_OS_BLAZAR=1   `start` also starts Blazar
#   BERTH_OS_PORT_BASE  first of the 10 ports used (default: the first free block of
#                       25000, 25100, ..., 25900)
#   BERTH_OS_HOME       venv, pip cache and the running cloud (default: target/openstack)
#   BERTH_OS_DEADLINE   seconds each service may take to answer (default 180)
#
# Exports, read by the tests that drive a real cloud:
#   OS_AUTH_URL OS_IDENTITY_API_VERSION OS_USERNAME OS_PASSWORD OS_PROJECT_NAME
#   OS_USER_DOMAIN_NAME OS_PROJECT_DOMAIN_NAME OS_REGION_NAME OS_INTERFACE
#                               admin in project admin; the catalog names every service
#   BERTH_TEST_OPENSTACK=1      a cloud is up
#   BERTH_TEST_OS_DIR           its files (logs in log/)
#   BERTH_TEST_OS_COMPUTES      the fake hosts, as BERTH_OS_COMPUTES
#   BERTH_TEST_OS_PLACEMENT_URL BERTH_TEST_OS_COMPUTE_URL   the same URLs as the catalog's
#   BERTH_TEST_OS_IMAGE_ID BERTH_TEST_OS_IMAGE_NAME        the stand-in's one image (cirros)
#   BERTH_TEST_OS_BLAZAR_URL    Blazar's v1 API, once it runs
#
# Only `export` lines go to stdout; progress and errors go to stderr.
set -euo pipefail

log() { echo "openstack.sh: $*" >&2; }
die() { log "$*"; exit 2; }

REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=$REPO/.ci/openstack
HOME_DIR=${BERTH_OS_HOME:-$REPO/target/openstack}
VENV=$HOME_DIR/venv
DIR=$HOME_DIR/stack
COMPUTES=${BERTH_OS_COMPUTES:-cpu1:8:16384:200 cpu2:4:8192:100}
DEADLINE=${BERTH_OS_DEADLINE:-180}
T0=$(date +%s%N)

mark() {
    local ds=$(( ($(date +%s%N) - T0) / 100000000 ))
    log "[$((ds / 10)).$((ds % 10)) s] $*"
}

# ---------------------------------------------------------------- install

pins_stamp() {
    { cat "$SRC/requirements.txt" "$SRC/constraints.txt"; python3 -VV; } | sha256sum | cut -c1-16
}

install_debs() {
    local need=()
    command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
    [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || need+=(rabbitmq-server)
    command -v curl >/dev/null 2>&1 || need+=(curl)
    python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
    [ ${#need[@]} -eq 0 ] && return
    [ "$(id -u)" -eq 0 ] || die "missing ${need[*]} and we are not root; run: apt-get install -y ${need[*]}"
    log "installing ${need[*]} from Debian packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    # Their own services are not used (and may fail to start without an init system).
    apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 \
        || { [ -x /usr/sbin/mariadbd ] && [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] \
             || die "apt-get install ${need[*]} failed"; }
}

# The venv is the cache: kept while the pins and the Python stay the same, else made anew.
install_venv() {
    local stamp
    stamp=$(pins_stamp)
    if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.berth-pins" 2>/dev/null)" = "$stamp" ]; then
        return
    fi
    local t=$SECONDS
    log "installing the pinned OpenStack packages into $VENV"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --cache-dir "$HOME_DIR/pip-cache" -r "$SRC/requirements.txt" \
        -c "$SRC/constraints.txt" >&2 || die "pip could not install the pinned packages"
    echo "$stamp" >"$VENV/.berth-pins"
    log "venv ready in $((SECONDS - t)) s"
}

install() {
    install_venv
    # Nova loads compute drivers from the nova.virt package only.
    local virt
    virt=$("$VENV/bin/python" -c 'import nova.virt, os; print(os.path.dirname(nova.virt.__file__))')
    cp "$SRC/berth_fake.py" "$virt/berth_fake.py"
}

freeze() {
    local tmp
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-os-freeze.XXXXXX")
    python3 -m venv "$tmp/venv"
    "$tmp/venv/bin/pip" install -q -r "$SRC/requirements.txt" >&2
    {
        echo "# Every package the venv of .ci/openstack.sh holds, at the version pip resolved for"
        echo "# requirements.txt on CPython $(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])') (refresh: bash .ci/openstack.sh freeze)."
        "$tmp/venv/bin/pip" freeze | grep -v -i -E '^(pip|setuptools)=='
    } >"$SRC/constraints.txt"
    rm -rf "$tmp"
    log "wrote $SRC/constraints.txt"
}

# ---------------------------------------------------------------- processes

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Starts NAME in its own session (so that its process group can be stopped whole).
svc() {
    local name=$1
    shift
    setsid env HOME="$DIR/home" "$@" </dev/null >>"$DIR/log/$name.log" 2>&1 &
    record $! "$name"
    date +%s%N >"$DIR/run/$name.t"
}

# A process's start time (ticks since boot): with its PID, it names the process for good.
starttime() {
    local line
    { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
    # shellcheck disable=SC2086
    set -- ${line##*) }
    echo "${20}"
}

record() { echo "$1 $(starttime "$1")" >"$DIR/run/$2.pid"; }

# The PID of NAME if that very process still runs (a PID left by a cloud that died with its
# machine may have been reused since).
pid_of() {
    local pid st
    read -r pid st <"$DIR/run/$1.pid" 2>/dev/null && [ "$(starttime "$pid")" = "$st" ] && echo "$pid"
}

alive() { pid_of "$1" >/dev/null; }

tail_log() {
    local f
    for f in "$@"; do
        [ -f "$f" ] || continue
        echo "----- last lines of $f" >&2
        tail -n 40 "$f" >&2
    done
}

# The bring-up failed at NAME: show why, stop what runs, keep the logs for reading.
fail() {
    local name=$1
    shift
    log "$name: $*"
    tail_log "$DIR/log/$name.log"
    echo failed >"$DIR/state"
    # shellcheck disable=SC2046
    kill $(jobs -p) 2>/dev/null || true
    kill_all
    log "logs kept in $DIR/log; \`bash .ci/openstack.sh stop\` deletes them"
    exit 1
}

# True if something listens on PORT, and when URL is given, answers it with any HTTP status.
answers() {
    if [ -n "${2:-}" ]; then
        [ "$(curl -s -o /dev/null -m 5 -w '%{http_code}' "$2" || true)" != 000 ]
    else
        ! port_free "$1"
    fi
}

# Waits until NAME accepts TCP connections on PORT (or HTTP answers at URL).
wait_up() {
    local name=$1 port=$2 url=${3:-} deadline=$((SECONDS + DEADLINE))
    while :; do
        if answers "$port" "$url"; then
            echo "$(( ($(date +%s%N) - $(cat "$DIR/run/$name.t")) / 1000000 )) ms $name answers" >>"$DIR/log/steps.log"
            return
        fi
        alive "$name" || fail "$name" "exited before it answered on 127.0.0.1:$port"
        [ $SECONDS -lt $deadline ] || fail "$name" "no answer on 127.0.0.1:$port within $DEADLINE s"
        sleep 0.2
    done
}

# Runs a one-off step with its output in log/NAME.log; on failure shows it and gives up.
step() {
    local name=$1 t
    t=$(date +%s%N)
    shift
    env HOME="$DIR/home" "$@" >>"$DIR/log/$name.log" 2>&1 </dev/null || fail "$name" "\`$*\` failed"
    echo "$(( ($(date +%s%N) - t) / 1000000 )) ms $name: ${*: -3}" >>"$DIR/log/steps.log"
}

# Every process as "PID PGRP UTIME STIME RSS" (ticks, pages), from /proc/PID/stat.
procs() {
    local f line rest
    for f in /proc/[0-9]*/stat; do
        { read -r line <"$f"; } 2>/dev/null || continue
        rest=${line##*) }
        # shellcheck disable=SC2086
        set -- $rest
        f=${f#/proc/}
        echo "${f%/stat} $3 ${12} ${13} ${22}"
    done
}

# Sends TERM to every process group we started, then KILL to what is left after 3 s. A
# background bring-up goes first, so that it starts nothing more. A group whose leader is gone
# is still ours while it has members (Linux does not reuse a PID that names a live group).
kill_all() {
    local f pid st pids=()
    for f in "$DIR/run/bring-up.pid" "$DIR"/run/*.pid; do
        [ -f "$f" ] || continue
        read -r pid st <"$f" || continue
        rm -f "$f"
        # Never ourselves: a failing background bring-up records its own PID too.
        [ "$pid" = "$$" ] && continue
        [ "$(starttime "$pid")" = "$st" ] || [ ! -e "/proc/$pid" ] || continue
        if [ "$f" = "$DIR/run/bring-up.pid" ]; then
            kill -KILL -- "-$pid" 2>/dev/null || true
        else
            kill -TERM -- "-$pid" 2>/dev/null && pids+=("$pid")
        fi
    done
    local end=$((SECONDS + 3))
    for pid in "${pids[@]}"; do
        while kill -0 -- "-$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
        kill -KILL -- "-$pid" 2>/dev/null || true
    done
    rm -f "$DIR"/run/*.t
}

# ---------------------------------------------------------------- configuration

# Chooses ports and passwords and writes env, the exports; the bring-up reads them back.
plan() {
    local base=${BERTH_OS_PORT_BASE:-} b i ok
    if [ -z "$base" ]; then
        for b in $(seq 25000 100 25900); do
            ok=1
            for i in $(seq 0 9); do port_free $((b + i)) || { ok=; break; }; done
            [ -n "$ok" ] && { base=$b; break; }
        done
        [ -n "$base" ] || die "no block of 10 free ports at 25000..25909; set BERTH_OS_PORT_BASE"
    else
        for i in $(seq 0 9); do
            port_free $((base + i)) || die "port $((base + i)) (BERTH_OS_PORT_BASE=$base + $i) is in use"
        done
    fi
    local item name v m d
    for item in $COMPUTES; do
        IFS=: read -r name v m d <<<"$item"
        [[ $name =~ ^[a-z][a-z0-9-]*$ && $v =~ ^[1-9][0-9]*$ && $m =~ ^[1-9][0-9]*$ && $d =~ ^[1-9][0-9]*$ ]] \
            || die "BERTH_OS_COMPUTES: \`$item\` is not NAME:VCPUS:MEMORY_MB:DISK_GB (e.g. cpu1:8:16384:200)"
    done
    rm -rf "$DIR"
    mkdir -p "$DIR"/{run,log,home,wsgi}
    touch "$DIR/.berth-openstack"
    pw() { od -An -N12 -tx1 /dev/urandom | tr -d ' \n'; }
    cat >"$DIR/ports" <<EOF
KS_PORT=$base
PL_PORT=$((base + 1))
NOVA_PORT=$((base + 2))
BLAZAR_PORT=$((base + 3))
GLANCE_PORT=$((base + 4))
NEUTRON_PORT=$((base + 5))
DB_PORT=$((base + 6))
AMQP_PORT=$((base + 7))
DIST_PORT=$((base + 8))
EPMD_PORT=$((base + 9))
ADMIN_PW=$(pw)
SERVICE_PW=$(pw)
DB_PW=$(pw)
COMPUTES="$COMPUTES"
EOF
    # shellcheck source=/dev/null
    . "$DIR/ports"
    cat >"$DIR/env" <<EOF
export OS_AUTH_URL='http://127.0.0.1:$KS_PORT/v3'
export OS_IDENTITY_API_VERSION='3'
export OS_USERNAME='admin'
export OS_PASSWORD='$ADMIN_PW'
export OS_PROJECT_NAME='admin'
export OS_USER_DOMAIN_NAME='Default'
export OS_PROJECT_DOMAIN_NAME='Default'
export OS_REGION_NAME='RegionOne'
export OS_INTERFACE='public'
export BERTH_TEST_OPENSTACK='1'
export BERTH_TEST_OS_DIR='$DIR'
export BERTH_TEST_OS_COMPUTES='$COMPUTES'
export BERTH_TEST_OS_PLACEMENT_URL='http://127.0.0.1:$PL_PORT'
export BERTH_TEST_OS_COMPUTE_URL='http://127.0.0.1:$NOVA_PORT/v2.1'
export BERTH_TEST_OS_IMAGE_ID='$(sed -n 's/^IMAGE_ID = "\(.*\)"$/\1/p' "$SRC/standins.py")'
export BERTH_TEST_OS_IMAGE_NAME='cirros'
EOF
    echo planned >"$DIR/state"
}

load() {
    [ -f "$DIR/ports" ] || die "no cloud in $DIR; start one with: bash .ci/openstack.sh start"
    # shellcheck source=/dev/null
    . "$DIR/ports"
    DB="mysql+pymysql://os:$DB_PW@127.0.0.1:$DB_PORT"
    RABBIT="rabbit://guest:guest@127.0.0.1:$AMQP_PORT/"
    KS="http://127.0.0.1:$KS_PORT/v3"
}

# Keystone credentials of a service user, for [keystone_authtoken] and the clients' sections.
ksa() {
    cat <<EOF
auth_url = $KS
auth_type = password
user_domain_name = Default
project_domain_name = Default
project_name = service
username = $1
password = $SERVICE_PW
region_name = RegionOne
EOF
}

authtoken() {
    printf '[keystone_authtoken]\nwww_authenticate_uri = %s\nmemcached_servers =\n' "$KS"
    ksa "$1"
}

write_configs() {
    mkdir -p "$DIR"/mysql "$DIR"/rabbit/{mnesia,log} "$DIR"/keystone/{fernet-keys,credential-keys,receipt-keys} \
        "$DIR"/placement "$DIR"/nova/{state,lock} "$DIR"/blazar
    cat >"$DIR/mysql/my.cnf" <<EOF
[mysqld]
user = $(id -un)
datadir = $DIR/mysql/data
socket = $DIR/mysql/mysqld.sock
pid-file = $DIR/mysql/mysqld.pid
bind-address = 127.0.0.1
port = $DB_PORT
skip-name-resolve
max_connections = 500
performance_schema = OFF
# Throwaway data: no fsync, small buffers.
innodb_flush_log_at_trx_commit = 0
innodb_doublewrite = 0
innodb_buffer_pool_size = 96M
innodb_log_file_size = 32M
sync_binlog = 0
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
[client]
socket = $DIR/mysql/mysqld.sock
EOF
    cat >"$DIR/rabbit/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:$AMQP_PORT
distribution.listener.interface = 127.0.0.1
distribution.listener.port_range.min = $DIST_PORT
distribution.listener.port_range.max = $DIST_PORT
log.console = true
log.file = false
EOF
    echo '[].' >"$DIR/rabbit/enabled_plugins"

    cat >"$DIR/keystone/keystone.conf" <<EOF
[database]
connection = $DB/keystone?charset=utf8
[identity]
# bcrypt's fewest rounds: every token request checks a password (loopback test cloud only).
password_hash_rounds = 4
[token]
provider = fernet
[fernet_tokens]
key_repository = $DIR/keystone/fernet-keys
[fernet_receipts]
key_repository = $DIR/keystone/receipt-keys
[credential]
key_repository = $DIR/keystone/credential-keys
EOF

    {
        printf '[api]\nauth_strategy = keystone\n[placement_database]\nconnection = %s/placement?charset=utf8\n' "$DB"
        authtoken placement
    } >"$DIR/placement/placement.conf"

    cp "$VENV/etc/nova/api-paste.ini" "$DIR/nova/api-paste.ini"
    {
        cat <<EOF
[DEFAULT]
host = controller
my_ip = 127.0.0.1
state_path = $DIR/nova/state
transport_url = $RABBIT
[api]
auth_strategy = keystone
[wsgi]
api_paste_config = $DIR/nova/api-paste.ini
[api_database]
connection = $DB/nova_api?charset=utf8
[database]
connection = $DB/nova?charset=utf8
[oslo_concurrency]
lock_path = $DIR/nova/lock
[glance]
endpoint_override = http://127.0.0.1:$GLANCE_PORT
[service_user]
send_service_user_token = false
[quota]
instances = -1
cores = -1
ram = -1
server_groups = -1
server_group_members = -1
[scheduler]
workers = 1
discover_hosts_in_cells_interval = 2
[filter_scheduler]
available_filters = nova.scheduler.filters.all_filters
available_filters = blazarnova.scheduler.filters.blazar_filter.BlazarFilter
# Nova's default filters plus Blazar's (which passes every host while no lease exists).
enabled_filters = ComputeFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter,ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter,BlazarFilter
track_instance_changes = false
[conductor]
workers = 1
[vnc]
enabled = false
[placement]
EOF
        ksa placement
        printf '[neutron]\nendpoint_override = http://127.0.0.1:%s\n' "$NEUTRON_PORT"
        ksa nova
        authtoken nova
    } >"$DIR/nova/nova.conf"
    printf '[database]\nconnection = %s/nova_cell0?charset=utf8\n' "$DB" >"$DIR/nova/cell0.conf"
    local item name v m d
    for item in $COMPUTES; do
        IFS=: read -r name v m d <<<"$item"
        mkdir -p "$DIR/nova/$name"/{state,lock}
        cat >"$DIR/nova/compute-$name.conf" <<EOF
[DEFAULT]
host = $name
compute_driver = berth_fake.SizedFakeDriver
state_path = $DIR/nova/$name/state
[oslo_concurrency]
lock_path = $DIR/nova/$name/lock
EOF
    done

    {
        cat <<EOF
[DEFAULT]
host = 127.0.0.1
transport_url = $RABBIT
os_auth_host = 127.0.0.1
os_auth_port = $KS_PORT
os_auth_prefix =
os_auth_version = v3
os_admin_username = blazar
os_admin_password = $SERVICE_PW
os_admin_project_name = service
os_admin_user_domain_name = Default
os_admin_project_domain_name = Default
os_region_name = RegionOne
[database]
connection = $DB/blazar?charset=utf8
[manager]
plugins = physical.host.plugin,virtual.instance.plugin
[nova]
aggregate_freepool_name = freepool
[oslo_concurrency]
lock_path = $DIR/blazar
[physical:host]
enable_polling_monitor = false
enable_notification_monitor = false
EOF
        authtoken blazar
    } >"$DIR/blazar/blazar.conf"
}

# ---------------------------------------------------------------- bring-up

gunicorn() {
    local name=$1 port=$2 app=$3
    shift 3
    svc "$name" "$@" "$VENV/bin/gunicorn" --no-control-socket -b "127.0.0.1:$port" -w 1 --threads 4 \
        --timeout 120 --pythonpath "$SRC" "wsgi_apps:$app()"
}

start_infra() {
    svc epmd epmd -port "$EPMD_PORT" -address 127.0.0.1
    wait_up epmd "$EPMD_PORT"
    svc rabbitmq env RABBITMQ_NODENAME=berth@localhost RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
        RABBITMQ_NODE_PORT="$AMQP_PORT" RABBITMQ_DIST_PORT="$DIST_PORT" ERL_EPMD_PORT="$EPMD_PORT" \
        ERL_EPMD_ADDRESS=127.0.0.1 RABBITMQ_CONFIG_FILE="$DIR/rabbit/rabbitmq.conf" \
        RABBITMQ_MNESIA_BASE="$DIR/rabbit/mnesia" RABBITMQ_LOG_BASE="$DIR/rabbit/log" \
        RABBITMQ_ENABLED_PLUGINS_FILE="$DIR/rabbit/enabled_plugins" RABBITMQ_PID_FILE="$DIR/rabbit/pid" \
        /usr/lib/rabbitmq/bin/rabbitmq-server
    step mysql mariadb-install-db --defaults-file="$DIR/mysql/my.cnf" --auth-root-authentication-method=normal \
        --skip-test-db
    svc mysql /usr/sbin/mariadbd --defaults-file="$DIR/mysql/my.cnf"
    wait_up mysql "$DB_PORT"
    step mysql mariadb --defaults-file="$DIR/mysql/my.cnf" -uroot -e "
        CREATE DATABASE keystone; CREATE DATABASE placement; CREATE DATABASE nova_api;
        CREATE DATABASE nova; CREATE DATABASE nova_cell0; CREATE DATABASE blazar;
        CREATE USER 'os'@'127.0.0.1' IDENTIFIED BY '$DB_PW';
        GRANT ALL ON *.* TO 'os'@'127.0.0.1';"
    mark "MariaDB up on 127.0.0.1:$DB_PORT"
}

# A Fernet key as keystone-manage fernet_setup writes it: 32 random bytes, URL-safe base64.
fernet_keys() {
    local d=$1
    chmod 0700 "$d"
    head -c 32 /dev/urandom | base64 | tr '+/' '-_' >"$d/0"
    head -c 32 /dev/urandom | base64 | tr '+/' '-_' >"$d/1"
    chmod 0600 "$d"/0 "$d"/1
}

keystone_up() {
    local kc=(--config-file "$DIR/keystone/keystone.conf")
    fernet_keys "$DIR/keystone/fernet-keys"
    fernet_keys "$DIR/keystone/receipt-keys"
    fernet_keys "$DIR/keystone/credential-keys"
    step keystone-manage "$VENV/bin/keystone-manage" "${kc[@]}" db_sync
    step keystone-manage "$VENV/bin/keystone-manage" "${kc[@]}" bootstrap --bootstrap-password "$ADMIN_PW" \
        --bootstrap-region-id RegionOne --bootstrap-admin-url "$KS/" --bootstrap-internal-url "$KS/" \
        --bootstrap-public-url "$KS/"
    gunicorn keystone "$KS_PORT" keystone OS_KEYSTONE_CONFIG_DIR="$DIR/keystone"
    wait_up keystone "$KS_PORT" "$KS"
    step keystone-setup bash -c ". '$DIR/env' && '$VENV/bin/python' '$SRC/ostool.py' keystone-setup \
        '$SERVICE_PW' placement nova blazar -- \
        'placement:placement:http://127.0.0.1:$PL_PORT' \
        'nova:compute:http://127.0.0.1:$NOVA_PORT/v2.1' \
        'glance:image:http://127.0.0.1:$GLANCE_PORT|mock Glance: one image record, no image service' \
        'neutron:network:http://127.0.0.1:$NEUTRON_PORT|mock Neutron: empty collections, no network service'"
    mark "Keystone up on $KS (service project, users, catalog)"
}

placement_up() {
    step placement-manage "$VENV/bin/placement-manage" --config-file "$DIR/placement/placement.conf" db sync
    gunicorn placement "$PL_PORT" placement OS_PLACEMENT_CONFIG_DIR="$DIR/placement"
    wait_up placement "$PL_PORT" "http://127.0.0.1:$PL_PORT/"
    mark "Placement up on 127.0.0.1:$PL_PORT"
}

# The API database and its cell mappings; the two cell databases sync beside it.
nova_api_db() {
    local nc=(--config-file "$DIR/nova/nova.conf")
    step nova-manage "$VENV/bin/nova-manage" "${nc[@]}" api_db sync
    step nova-manage "$VENV/bin/nova-manage" "${nc[@]}" cell_v2 map_cell0 \
        --database_connection "$DB/nova_cell0?charset=utf8"
    step nova-manage "$VENV/bin/nova-manage" "${nc[@]}" cell_v2 create_cell --name cell1
}

nova_cell_db() {
    step "nova-manage-$1" "$VENV/bin/nova-manage" --config-file "$DIR/nova/nova.conf" \
        ${2:+--config-file "$2"} db sync --local_cell
}

wait_rabbit() {
    wait_up rabbitmq "$AMQP_PORT"
    mark "RabbitMQ up on 127.0.0.1:$AMQP_PORT"
}

nova_services() {
    local nc=(--config-file "$DIR/nova/nova.conf")
    svc nova-conductor "$VENV/bin/nova-conductor" "${nc[@]}"
    svc nova-scheduler "$VENV/bin/nova-scheduler" "${nc[@]}"
    gunicorn nova-api "$NOVA_PORT" nova OS_NOVA_CONFIG_DIR="$DIR/nova"
}

computes_up() {
    local nc=(--config-file "$DIR/nova/nova.conf") item name v m d names=() n
    for item in $COMPUTES; do
        IFS=: read -r name v m d <<<"$item"
        names+=("$name")
        svc "nova-compute-$name" BERTH_FAKE_VCPUS="$v" BERTH_FAKE_MEMORY_MB="$m" BERTH_FAKE_DISK_GB="$d" \
            "$VENV/bin/nova-compute" "${nc[@]}" --config-file "$DIR/nova/compute-$name.conf"
    done
    wait_up nova-api "$NOVA_PORT" "http://127.0.0.1:$NOVA_PORT/"
    step flavors bash -c ". '$DIR/env' && '$VENV/bin/python' '$SRC/ostool.py' flavors"
    mark "Nova API up on 127.0.0.1:$NOVA_PORT, flavors m1.tiny..m1.xlarge"
    if ! env HOME="$DIR/home" bash -c ". '$DIR/env' && '$VENV/bin/python' '$SRC/ostool.py' wait-computes $DEADLINE" \
        >>"$DIR/log/wait-computes.log" 2>&1; then
        tail_log "$DIR/log/wait-computes.log"
        fail "nova-compute-${names[0]}" "the computes did not all reach Placement"
    fi
    # The scheduler maps new computes to cell1 every 2 s ([scheduler] discover_hosts_in_cells_interval).
    local deadline=$((SECONDS + DEADLINE))
    while :; do
        n=$(mariadb --defaults-file="$DIR/mysql/my.cnf" -uroot -N -e 'SELECT COUNT(*) FROM nova_api.host_mappings' 2>/dev/null || echo 0)
        [ "$n" -ge ${#names[@]} ] && break
        [ $SECONDS -lt $deadline ] || fail nova-scheduler "$n of ${#names[@]} computes mapped to cell1 after $DEADLINE s"
        sleep 0.2
    done
    alive nova-conductor || fail nova-conductor "exited"
    alive nova-scheduler || fail nova-scheduler "exited"
    mark "computes ${names[*]} in Placement and mapped to cell1"
}

blazar_db() {
    step blazar-db-manage "$VENV/bin/blazar-db-manage" --config-file "$DIR/blazar/blazar.conf" upgrade head
    touch "$DIR/blazar/db-synced"
}

blazar_up() {
    [ -f "$DIR/blazar/db-synced" ] || blazar_db
    step keystone-setup bash -c ". '$DIR/env' && '$VENV/bin/python' '$SRC/ostool.py' keystone-setup \
        '$SERVICE_PW' blazar -- 'blazar:reservation:http://127.0.0.1:$BLAZAR_PORT/v1'"
    step freepool bash -c ". '$DIR/env' && '$VENV/bin/python' '$SRC/ostool.py' freepool"
    gunicorn blazar-api "$BLAZAR_PORT" blazar OS_BLAZAR_CONFIG_DIR="$DIR/blazar"
    svc blazar-manager "$VENV/bin/blazar-manager" --config-file "$DIR/blazar/blazar.conf"
    wait_up blazar-api "$BLAZAR_PORT" "http://127.0.0.1:$BLAZAR_PORT/"
    alive blazar-manager || fail blazar-manager "exited"
    echo "export BERTH_TEST_OS_BLAZAR_URL='http://127.0.0.1:$BLAZAR_PORT/v1'" >>"$DIR/env"
    mark "Blazar up on 127.0.0.1:$BLAZAR_PORT (API, manager, freepool aggregate)"
}

# Every step after the plan; independent chains run side by side.
bring_up() {
    echo starting >"$DIR/state"
    install_debs
    install
    load
    write_configs
    svc glance-standin "$VENV/bin/python" "$SRC/standins.py" glance "$GLANCE_PORT"
    svc neutron-standin "$VENV/bin/python" "$SRC/standins.py" neutron "$NEUTRON_PORT"
    start_infra
    local ks pl api c1 c0 bz=
    keystone_up & ks=$!
    placement_up & pl=$!
    nova_api_db & api=$!
    nova_cell_db cell1 & c1=$!
    nova_cell_db cell0 "$DIR/nova/cell0.conf" & c0=$!
    if [ "${BERTH_OS_BLAZAR:-}" = 1 ]; then
        blazar_db & bz=$!
    fi
    wait $api && wait $c1 && wait $c0 || fail bring-up "a Nova database step failed (see above)"
    mark "Nova databases synced"
    # Nova's services read the catalog once, at start: Keystone's must be complete by then.
    wait $ks && wait $pl || fail bring-up "the Keystone or Placement chain failed (see above)"
    nova_services
    wait_rabbit
    computes_up
    if [ -n "$bz" ]; then
        wait $bz || fail bring-up "blazar-db-manage failed (see above)"
        blazar_up
    fi
    echo ready >"$DIR/state"
    times >"$DIR/run/times"
    mark "OpenStack ready: $(rss_total) MiB RSS in all; CPU: $(steps_cpu) s in one-off steps, $(status 2>/dev/null | awk '$1 == "total" { print $2 }') s in services"
}

# CPU seconds of the bring-up's finished children (the one-off steps), from `times`.
steps_cpu() {
    awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } printf "%.1f", s }' "$DIR/run/times"
}

rss_total() { status 2>/dev/null | awk '$1 == "total" { print $3 }'; }

running() {
    [ -f "$DIR/.berth-openstack" ] && [ "$(cat "$DIR/state" 2>/dev/null)" = ready ] && load >/dev/null \
        && alive keystone && alive nova-api && alive placement && alive mysql && alive rabbitmq
}

start() {
    local background=
    [ "${1:-}" = --background ] && background=1
    if running; then
        log "the cloud in $DIR is running"
        cat "$DIR/env"
        return
    fi
    if [ "$(cat "$DIR/state" 2>/dev/null)" = starting ] && alive bring-up; then
        log "a bring-up is under way in $DIR"
        wait_ready
        cat "$DIR/env"
        return
    fi
    [ -d "$DIR" ] && { stop >/dev/null 2>&1 || true; }
    plan
    load
    if [ -n "$background" ]; then
        # The bring-up goes on in its own session; `wait` reports its end.
        setsid bash "$0" bring-up </dev/null >"$DIR/log/bring-up.log" 2>&1 &
        record $! bring-up
        log "bringing up OpenStack in the background (log: $DIR/log/bring-up.log); then: bash .ci/openstack.sh wait"
    else
        bring_up
    fi
    cat "$DIR/env"
}

wait_ready() {
    local deadline=$((SECONDS + ${1:-900})) state
    while :; do
        state=$(cat "$DIR/state" 2>/dev/null || echo missing)
        case $state in
            ready) log "ready after $(( ($(date +%s%N) - T0) / 1000000000 )) s of waiting"; return ;;
            failed | missing) tail_log "$DIR/log/bring-up.log"; die "the bring-up in $DIR failed ($state)" ;;
        esac
        if [ -f "$DIR/run/bring-up.pid" ] && ! alive bring-up; then
            tail_log "$DIR/log/bring-up.log"
            die "the bring-up in $DIR died"
        fi
        [ $SECONDS -lt $deadline ] || { tail_log "$DIR/log/bring-up.log"; die "not ready within ${1:-900} s"; }
        sleep 0.5
    done
}

start_blazar() {
    running || die "no running cloud in $DIR; start one with: bash .ci/openstack.sh start"
    if grep -q BERTH_TEST_OS_BLAZAR_URL "$DIR/env" && alive blazar-api && alive blazar-manager; then
        log "Blazar is running"
    else
        blazar_up
    fi
    cat "$DIR/env"
}

# CPU seconds and RSS of each process group we started, from /proc.
status() {
    load
    log "state: $(cat "$DIR/state")"
    local f pgids=() names=()
    for f in "$DIR"/run/*.pid; do
        [ -f "$f" ] || continue
        pgids+=("$(cut -d' ' -f1 "$f")")
        names+=("$(basename "$f" .pid)")
    done
    local hz
    hz=$(getconf CLK_TCK)
    procs | awk -v pg="${pgids[*]}" -v nm="${names[*]}" -v hz="$hz" -v page="$(getconf PAGESIZE)" '
        BEGIN { n = split(pg, g, " "); split(nm, name, " "); for (i = 1; i <= n; i++) idx[g[i]] = i }
        ($2 in idx) { c[idx[$2]] += ($3 + $4) / hz; r[idx[$2]] += $5 * page / 1048576 }
        END {
            printf "%-24s %8s %8s %8s\n", "SERVICE", "PGID", "CPU_S", "RSS_MIB"
            for (i = 1; i <= n; i++) {
                printf "%-24s %8d %8.1f %8.0f\n", name[i], g[i], c[i], r[i]; tc += c[i]; tr += r[i]
            }
            printf "%-24s %8s %8.1f %8.0f\n", "total", "", tc, tr
        }'
}

stop() {
    if [ ! -d "$DIR" ]; then
        log "no cloud in $DIR"
        return
    fi
    [ -f "$DIR/.berth-openstack" ] || die "refusing to remove $DIR: not a directory this script made"
    kill_all
    # Anything left that names this cloud's files is ours (e.g. a step of a killed bring-up).
    local f pid left=()
    for f in /proc/[0-9]*/cmdline; do
        pid=${f#/proc/}
        pid=${pid%/cmdline}
        [ "$pid" = "$$" ] && continue
        { tr '\0' ' ' <"$f"; } 2>/dev/null | grep -qF "$DIR/" && left+=("$pid")
    done
    if [ ${#left[@]} -gt 0 ]; then
        log "killing leftover processes ${left[*]}"
        kill -KILL "${left[@]}" 2>/dev/null || true
    fi
    rm -rf "$DIR"
    log "stopped and removed $DIR"
}

case "${1:-start}" in
    start) start "${2:-}" ;;
    bring-up) load; record $$ bring-up; bring_up ;;
    wait) wait_ready "${2:-}" ;;
    start-blazar) start_blazar ;;
    env) load >/dev/null; cat "$DIR/env" ;;
    smoke) load; bash -c ". '$DIR/env' && exec '$VENV/bin/python' '$SRC/ostool.py' smoke" ;;
    status) status ;;
    stop) stop ;;
    install) install_debs; install ;;
    freeze) freeze ;;
    *) die "usage: $0 start [--background] | wait [SECONDS] | start-blazar | env | smoke | status | stop | install | freeze" ;;
esac
