#!/usr/bin/env bash
# Apache Kafka clusters on loopback for the live tests (KRaft, from Maven Central jars), and the
# reference clients that join their groups. See tools/live/README.md.
#
#   kafka.sh fetch                                   # jars, our Java harness, the Python venv (cached)
#   kafka.sh start NAME --version 3.9.1|4.1.1 --port-base P [--brokers 1|3] [--sasl-ssl [--oauth]]
#                [--config KEY=VALUE]... [--feature NAME=LEVEL]...   # extra server.properties / format features
#                [--offsets-compression none|gzip|snappy|lz4|zstd]     # offsets.topic.compression.codec
#   kafka.sh stop NAME | stop-all
#   kafka.sh kill-broker NAME ID                     # SIGKILL one broker
#   kafka.sh restart-broker NAME ID                  # stop it (if running) and start it again
#   kafka.sh env NAME                                # the cluster's env file, as `export` lines
#   kafka.sh status
#   kafka.sh java NAME CLASS ARGS...                 # exec kcp.live.CLASS against the cluster's version
#   kafka.sh rdkafka NAME ARGS...                    # exec rdkafka_consumer.py
#   kafka.sh tool NAME|VERSION TOOL ARGS...          # exec one of Kafka's own command-line tools
#                                                    # (consumer-groups, dump-log, get-offsets or a class)
#
# Every broker binds 127.0.0.1 only; every wait is bounded. State lives in ${KCP_LIVE_RUN}/NAME,
# jars and the venv in ${KCP_LIVE_CACHE}. Client processes started through `java`/`rdkafka` (or
# registered in NAME/clients.pids) are killed, with their process groups, by `stop`.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${KCP_LIVE_CACHE:-/tmp/kcp-live-cache}
RUN=${KCP_LIVE_RUN:-/tmp/kcp-live-run}
VERSIONS=(3.9.1 4.1.1)
CONFLUENT_KAFKA_VERSION=2.16.1
START_TIMEOUT_S=${KCP_LIVE_START_TIMEOUT_S:-120}
STOP_TIMEOUT_S=${KCP_LIVE_STOP_TIMEOUT_S:-20}
BROKER_HEAP=${KCP_LIVE_BROKER_HEAP:-512m}

log() { echo "[kafka.sh $(date -u +%H:%M:%S)] $*" >&2; }
die() { log "error: $*"; exit 1; }
usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

known_version() {
  local v
  for v in "${VERSIONS[@]}"; do [ "$v" = "$1" ] && return 0; done
  return 1
}

# ---------------------------------------------------------------- fetch
# The cache is shared by every checkout on the machine: fetch holds a lock, finished directories are
# never removed, and our Java classes live in a directory named after their sources' hash, so
# checkouts with different sources do not recompile over each other's classes.
# Maven 3.8 writes ANSI colour resets (ESC[0m) even with -B; jansi.strip=true turns them off there,
# style.color=never on Maven 3.9+, and the sed removes whatever escape sequence is left, so that a
# fetch log read in a file or CI has none.
strip_ansi() { sed -u 's/\x1b\[[0-9;?]*[A-Za-z]//g'; }

fetch_maven() {  # fetch_maven POM-NAME [DIR]: copy its runtime dependencies into $CACHE/DIR once
  local name=$1 dest=$CACHE/${2:-$1} tmp
  [ -f "$dest/.complete" ] && return 0
  log "fetching $name (Maven Central)"
  tmp=$(mktemp -d "$CACHE/.tmp-$name.XXXXXX")
  if ! MAVEN_OPTS="${MAVEN_OPTS:-} -Djansi.strip=true" mvn -q -B -Dstyle.color=never -f "$HERE/maven/$name.pom.xml" \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" 2>&1 | strip_ansi >&2; then
    rm -rf "$tmp"
    die "maven failed for $name"
  fi
  touch "$tmp/.complete"
  rm -rf "$dest" && mv "$tmp" "$dest"
}

# Kafka's command-line tools (kafka-tools and kafka_2.13 with one SLF4J binding) live in a directory
# named after their pom's hash: an older tools-V directory (another binding) is never reused.
tools_dir() { echo "$CACHE/tools-$1-$(sha256sum < "$HERE/maven/tools-$1.pom.xml" | cut -c1-12)"; }

java_stamp() { cat "$HERE"/java/*.java | sha256sum | cut -c1-16; }
classes_dir() { echo "$CACHE/classes-$1-$(java_stamp)"; }  # classes_dir VERSION

compile_java() {  # compile_java VERSION: our harness against kafka-clients VERSION, once per source hash
  local v=$1 dest tmp
  dest=$(classes_dir "$v")
  [ -f "$dest/.complete" ] && return 0
  log "compiling tools/live/java against kafka-clients $v"
  tmp=$(mktemp -d "$CACHE/.tmp-classes-$v.XXXXXX")
  javac -nowarn -Xlint:none -d "$tmp" -cp "$CACHE/clients-$v/*" "$HERE"/java/*.java 2>&1 \
    | grep -v -E '^Note: ' >&2 || true
  [ -f "$tmp/kcp/live/LiveConsumer.class" ] || { rm -rf "$tmp"; die "javac failed for kafka-clients $v"; }
  touch "$tmp/.complete"
  rm -rf "$dest" && mv "$tmp" "$dest"
}

fetch_venv() {
  local py=$CACHE/venv/bin/python
  if [ -x "$py" ] && "$py" -c "import importlib.metadata as m,sys; sys.exit(m.version('confluent-kafka') != '$CONFLUENT_KAFKA_VERSION')" 2>/dev/null; then
    return 0
  fi
  log "installing confluent-kafka==$CONFLUENT_KAFKA_VERSION (PyPI) into $CACHE/venv"
  rm -rf "$CACHE/venv"
  python3 -m venv "$CACHE/venv"
  "$CACHE/venv/bin/pip" install -q --disable-pip-version-check --progress-bar off --no-color \
    "confluent-kafka==$CONFLUENT_KAFKA_VERSION" 2>&1 | strip_ansi >&2 || die "pip install confluent-kafka failed"
}

cmd_fetch() {
  command -v java >/dev/null || die "java is not installed"
  command -v openssl >/dev/null || die "openssl is not installed"
  if ! command -v mvn >/dev/null; then
    log "installing maven (apt)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >/dev/null
  fi
  mkdir -p "$CACHE"
  exec 9> "$CACHE/.fetch.lock"
  flock -w 900 9 || die "another fetch holds $CACHE/.fetch.lock"
  local v
  for v in "${VERSIONS[@]}"; do
    fetch_maven "broker-$v"
    fetch_maven "clients-$v"
    fetch_maven "tools-$v" "$(basename "$(tools_dir "$v")")"
    compile_java "$v"
  done
  fetch_venv
}

need_fetched() {  # need_fetched VERSION
  [ -f "$CACHE/broker-$1/.complete" ] && [ -f "$(classes_dir "$1")/.complete" ] \
    || die "Kafka $1 is not fetched: run tools/live/kafka.sh fetch"
}

# ---------------------------------------------------------------- helpers
port_busy() { ss -ltnH "( sport = :$1 )" 2>/dev/null | grep -q .; }

valid_name() { [[ $1 =~ ^[a-z][a-z0-9]*$ ]] || die "cluster name '$1': use [a-z][a-z0-9]* (it becomes KCP_LIVE_${1^^}_*)"; }

# A KRaft cluster id: 16 random bytes, base64url without padding. StorageTool reads an id that starts
# with '-' as an option, so draw again until it does not.
cluster_id() {
  local id
  while :; do
    id=$(openssl rand 16 | base64 | tr '+/' '-_' | tr -d '=\n')
    [ "${id:0:1}" != "-" ] && break
  done
  echo "$id"
}

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# stop_pid PID TIMEOUT_S: SIGTERM, wait (bounded), then SIGKILL.
stop_pid() {
  local pid=$1 t=$2 i
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < t * 10; i++)); do alive "$pid" || return 0; sleep 0.1; done
  log "pid $pid did not stop in ${t}s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do alive "$pid" || return 0; sleep 0.1; done
}

java_opts_for() {  # java_opts_for VERSION BROKER_DIR
  local v=$1 dir=$2
  # With --oauth the brokers read the JWKS from a file: Kafka 4 (and 3.9.1) refuses any
  # sasl.oauthbearer URL not in this system property.
  [ -f "$dir/../oauth/jwks.json" ] && echo "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=file://$(cd "$dir/../oauth" && pwd)/jwks.json"
  if [ "${v%%.*}" -ge 4 ]; then
    echo "-Dlog4j2.configurationFile=$dir/log4j2.properties"
  else
    echo "-Dlog4j.configuration=file:$dir/log4j.properties"
  fi
}

write_log_config() {  # write_log_config BROKER_DIR
  local dir=$1
  cat > "$dir/log4j.properties" <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$dir/broker.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.org.apache.kafka.common.security=INFO
EOF
  cat > "$dir/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $dir/broker.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
}

# ---------------------------------------------------------------- TLS material
make_tls() {  # make_tls DIR: a CA, a server cert for 127.0.0.1/localhost, a client cert, another CA
  local d=$1
  mkdir -p "$d"
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  (
    cd "$d"
    openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 30 -subj "/CN=kcp-live test CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl req -x509 "${ec[@]}" -keyout other-ca.key -out other-ca.pem -days 30 -subj "/CN=kcp-live other CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl req "${ec[@]}" -keyout server.key -out server.csr -subj "/CN=localhost"
    printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" > server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 30 \
      -extfile server.ext
    openssl req "${ec[@]}" -keyout client.key -out client.csr -subj "/CN=kcp-live-client"
    printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
      "extendedKeyUsage=clientAuth" > client.ext
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 30 \
      -extfile client.ext
    # Kafka's PEM key store: the unencrypted PKCS#8 key followed by the certificate chain.
    cat server.key server.pem ca.pem > server-keystore.pem
    cat client.key client.pem > client-keystore.pem
    rm -f ./*.csr ./*.ext ./*.srl
    # The stores a Java-world client.properties names (issue 26): JKS and PKCS12 truststores with
    # the CA, a PKCS12 keystore (openssl) and a JKS one (keytool) with the client key.
    keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.jks -storetype JKS \
      -storepass "$STORE_PASSWORD"
    keytool -importcert -noprompt -alias ca -file ca.pem -keystore truststore.p12 -storetype PKCS12 \
      -storepass "$STORE_PASSWORD"
    openssl pkcs12 -export -in client.pem -inkey client.key -name client -out client-keystore.p12 \
      -passout "pass:$STORE_PASSWORD"
    keytool -importkeystore -noprompt -srckeystore client-keystore.p12 -srcstoretype PKCS12 \
      -srcstorepass "$STORE_PASSWORD" -srcalias client -destkeystore client-keystore.jks -deststoretype JKS \
      -deststorepass "$STORE_PASSWORD" -destkeypass "$STORE_PASSWORD"
  ) > "$d/openssl.log" 2>&1 || { cat "$d/openssl.log" >&2; die "openssl/keytool failed"; }
}

# make_tls_v1 DIR: Confluent's recipe (its security tutorial, kafka-generate-ssl.sh) for the V1TLS
# and V1MTLS listeners (issue 38): a CA from `openssl req -new -x509`, JKS keystores whose keys
# keytool makes, and certificates signed by `openssl x509 -req -CA` without extensions, which
# OpenSSL 3.0 makes X.509 v1 (checked below). The broker's names it by CN=localhost only.
make_tls_v1() {
  local d=$1
  (
    cd "$d"
    openssl req -new -x509 -newkey rsa:2048 -nodes -keyout v1-ca.key -out v1-ca.pem -days 30 \
      -subj "/CN=kcp-live v1 CA"
    keytool -keystore v1-truststore.jks -storetype JKS -alias CARoot -importcert -noprompt -file v1-ca.pem \
      -storepass "$STORE_PASSWORD"
    local who cn
    for who in broker client; do
      cn=localhost
      [ "$who" = client ] && cn=kcp-live-v1-client
      keytool -keystore "v1-$who-keystore.jks" -storetype JKS -alias "$who" -validity 30 -genkey -keyalg RSA \
        -keysize 2048 -dname "CN=$cn" -storepass "$STORE_PASSWORD" -keypass "$STORE_PASSWORD"
      keytool -keystore "v1-$who-keystore.jks" -alias "$who" -certreq -file "v1-$who.csr" -storepass "$STORE_PASSWORD"
      openssl x509 -req -CA v1-ca.pem -CAkey v1-ca.key -in "v1-$who.csr" -out "v1-$who.pem" -days 30 -CAcreateserial
      openssl x509 -in "v1-$who.pem" -noout -text | grep -q "Version: 1 (0x0)" \
        || { echo "v1-$who.pem is not an X.509 v1 certificate"; exit 1; }
      keytool -keystore "v1-$who-keystore.jks" -alias CARoot -importcert -noprompt -file v1-ca.pem \
        -storepass "$STORE_PASSWORD"
      keytool -keystore "v1-$who-keystore.jks" -alias "$who" -importcert -noprompt -file "v1-$who.pem" \
        -storepass "$STORE_PASSWORD" -keypass "$STORE_PASSWORD"
    done
    rm -f ./*.csr ./*.srl
  ) > "$d/openssl-v1.log" 2>&1 || { cat "$d/openssl-v1.log" >&2; die "openssl/keytool failed (v1 certificates)"; }
}

make_oauth() {  # make_oauth DIR: an RSA key signing the test's JWTs and the JWKS the brokers verify with
  local d=$1
  mkdir -p "$d"
  (
    cd "$d"
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out jwt-key.pem
    openssl pkcs8 -topk8 -nocrypt -in jwt-key.pem -outform DER -out jwt-key.pk8  # PKCS#8 DER, for ring
    modulus=$(openssl rsa -in jwt-key.pem -noout -modulus | cut -d= -f2)
    printf '{"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":"kcp-live","e":"AQAB","n":"%s"}]}\n' \
      "$(printf '%s' "$modulus" | xxd -r -p | base64 -w0 | tr '+/' '-_' | tr -d '=')" > jwks.json
  ) > "$d/openssl.log" 2>&1 || { cat "$d/openssl.log" >&2; die "openssl failed"; }
}

# ---------------------------------------------------------------- start
# Ports of broker I (1-based) in a cluster whose base is P: P+4(I-1) + {0 PLAINTEXT, 1 CONTROLLER,
# 2 SASL_SSL, 3 MTLS (SSL with required client certificates)}.
port_of() { echo $(($1 + 4 * ($2 - 1) + $3)); }
# With --sasl-ssl, after every broker's four: broker I's V1TLS (SSL) and V1MTLS (SSL with required
# client certificates) listeners, whose certificates are X.509 v1: P+4N+2(I-1) + {0, 1}.
v1_port_of() { echo $(($1 + 4 * BROKERS + 2 * ($2 - 1) + $3)); }

write_server_properties() {  # write_server_properties DIR ID
  local dir=$1 id=$2 base=$PORT_BASE
  local plain ctrl sasl mtls
  plain=$(port_of "$base" "$id" 0) ctrl=$(port_of "$base" "$id" 1)
  sasl=$(port_of "$base" "$id" 2) mtls=$(port_of "$base" "$id" 3)
  local v1tls v1mtls
  v1tls=$(v1_port_of "$base" "$id" 0) v1mtls=$(v1_port_of "$base" "$id" 1)
  local listeners="PLAINTEXT://127.0.0.1:$plain,CONTROLLER://127.0.0.1:$ctrl"
  local advertised="PLAINTEXT://127.0.0.1:$plain"
  local protomap="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
  if [ "$SASL_SSL" = 1 ]; then
    listeners+=",SASL_SSL://127.0.0.1:$sasl,MTLS://127.0.0.1:$mtls"
    advertised+=",SASL_SSL://127.0.0.1:$sasl,MTLS://127.0.0.1:$mtls"
    protomap+=",SASL_SSL:SASL_SSL,MTLS:SSL"
    # Advertised by name: the v1 certificates name the broker by CN=localhost only.
    listeners+=",V1TLS://127.0.0.1:$v1tls,V1MTLS://127.0.0.1:$v1mtls"
    advertised+=",V1TLS://localhost:$v1tls,V1MTLS://localhost:$v1mtls"
    protomap+=",V1TLS:SSL,V1MTLS:SSL"
  fi
  local rf=$BROKERS min_isr=1
  [ "$BROKERS" -ge 3 ] && min_isr=2
  cat > "$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=$id
controller.quorum.voters=$VOTERS
listeners=$listeners
advertised.listeners=$advertised
listener.security.protocol.map=$protomap
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=$OFFSETS_PARTITIONS
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$min_isr
transaction.state.log.num.partitions=1
# Test-friendly group timings: no initial rebalance delay, short sessions allowed.
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=500
# Small thread pools: several brokers share two cores with the builds.
num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1
num.replica.fetchers=1
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=2097152
# A killed broker is fenced by the controller after 3 s (default 9 s), so leadership and the group
# coordinator move quickly; and they move only then, not at a preferred-leader election 5 min later.
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
auto.leader.rebalance.enable=false
controlled.shutdown.max.retries=1
controlled.shutdown.retry.backoff.ms=500
EOF
  if [ -n "$OFFSETS_CODEC" ]; then
    # offsets.topic.compression.codec takes Kafka's codec id.
    local codec_id
    case $OFFSETS_CODEC in none) codec_id=0 ;; gzip) codec_id=1 ;; snappy) codec_id=2 ;; lz4) codec_id=3 ;; zstd) codec_id=4 ;; esac
    echo "offsets.topic.compression.codec=$codec_id" >> "$dir/server.properties"
  fi
  if [ "${VERSION%%.*}" -ge 4 ]; then
    cat >> "$dir/server.properties" <<EOF
# KIP-848 defaults (heartbeat 5 s, session 45 s) are slow for tests. The session stays at 10 s: on
# a loaded two-core machine a 6 s session saw every member of a group fenced at once (a stall).
# A test wanting a shorter one sets the group's consumer.session.timeout.ms (minimum below).
group.consumer.min.heartbeat.interval.ms=100
group.consumer.heartbeat.interval.ms=1000
group.consumer.min.session.timeout.ms=1000
group.consumer.session.timeout.ms=10000
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$min_isr
EOF
  fi
  if [ ${#EXTRA_CONFIGS[@]} -gt 0 ]; then
    # Last: a later line of a properties file wins over an earlier one of the same key.
    { echo "# --config"; printf '%s\n' "${EXTRA_CONFIGS[@]}"; } >> "$dir/server.properties"
  fi
  if [ "$SASL_SSL" = 1 ]; then
    local tls=$CLUSTER_DIR/tls
    cat >> "$dir/server.properties" <<EOF
ssl.keystore.type=PEM
ssl.keystore.location=$tls/server-keystore.pem
ssl.truststore.type=PEM
ssl.truststore.location=$tls/ca.pem
ssl.endpoint.identification.algorithm=
listener.name.mtls.ssl.client.auth=required
listener.name.v1tls.ssl.keystore.type=JKS
listener.name.v1tls.ssl.keystore.location=$tls/v1-broker-keystore.jks
listener.name.v1tls.ssl.keystore.password=$STORE_PASSWORD
listener.name.v1tls.ssl.key.password=$STORE_PASSWORD
listener.name.v1mtls.ssl.keystore.type=JKS
listener.name.v1mtls.ssl.keystore.location=$tls/v1-broker-keystore.jks
listener.name.v1mtls.ssl.keystore.password=$STORE_PASSWORD
listener.name.v1mtls.ssl.key.password=$STORE_PASSWORD
listener.name.v1mtls.ssl.truststore.type=JKS
listener.name.v1mtls.ssl.truststore.location=$tls/v1-truststore.jks
listener.name.v1mtls.ssl.truststore.password=$STORE_PASSWORD
listener.name.v1mtls.ssl.client.auth=required
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$PLAIN_USER="$PLAIN_PASSWORD";
EOF
  fi
  if [ "$OAUTH" = 1 ]; then
    # SASL/OAUTHBEARER on the SASL_SSL listener: JWTs signed by the key of make_oauth, with
    # audience kcp-live, validated by Kafka's OAuthBearerValidatorCallbackHandler (KIP-768).
    sed -i 's/^sasl.enabled.mechanisms=.*/&,OAUTHBEARER/' "$dir/server.properties"
    cat >> "$dir/server.properties" <<EOF
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
sasl.oauthbearer.jwks.endpoint.url=file://$CLUSTER_DIR/oauth/jwks.json
sasl.oauthbearer.expected.audience=kcp-live
EOF
  fi
}

format_broker() {  # format_broker DIR: StorageTool format (with the SCRAM users when SASL is on)
  local dir=$1 extra=()
  if [ "$SASL_SSL" = 1 ]; then
    extra=(--add-scram "SCRAM-SHA-256=[name=$SCRAM_USER,password=$SCRAM_PASSWORD]"
      --add-scram "SCRAM-SHA-512=[name=$SCRAM_USER,password=$SCRAM_PASSWORD]")
  fi
  local f
  for f in "${EXTRA_FEATURES[@]}"; do extra+=(--feature "$f"); done
  # shellcheck disable=SC2046
  java -Xms64m -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC $(java_opts_for "$VERSION" "$dir") \
    -cp "$CACHE/broker-$VERSION/*" kafka.tools.StorageTool format -t "$CLUSTER_ID" \
    -c "$dir/server.properties" "${extra[@]}" > "$dir/format.log" 2>&1 \
    || { cat "$dir/format.log" >&2; die "formatting $dir failed"; }
}

# launch_broker NAME ID: start broker ID of cluster NAME in its own session (process group) and
# record its pid. Reads the cluster's meta file.
launch_broker() {
  local name=$1 id=$2 cdir=$RUN/$1 dir version
  dir=$cdir/broker-$id
  version=$(cat "$cdir/version")
  [ -f "$dir/broker.log" ] && mv "$dir/broker.log" "$dir/broker.log.$(date +%s%N)"
  # shellcheck disable=SC2046
  setsid java -Xms128m -Xmx"$BROKER_HEAP" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    $(java_opts_for "$version" "$dir") -cp "$CACHE/broker-$version/*" kafka.Kafka "$dir/server.properties" \
    > "$dir/broker.out" 2>&1 < /dev/null &
  echo $! > "$dir/pid"
}

# wait_ready NAME IDS...: every listed broker logs "Kafka Server started" (bounded), listens only on
# 127.0.0.1.
wait_ready() {
  local name=$1; shift
  local deadline=$((SECONDS + START_TIMEOUT_S)) id dir pid
  for id in "$@"; do
    dir=$RUN/$name/broker-$id
    pid=$(cat "$dir/pid")
    while ! grep -qs "Kafka Server started" "$dir/broker.log"; do
      alive "$pid" || { tail -n 40 "$dir/broker.out" "$dir/broker.log" >&2 2>/dev/null; die "$name broker $id died while starting"; }
      [ $SECONDS -lt $deadline ] || die "$name broker $id did not start in ${START_TIMEOUT_S}s (see $dir/broker.log)"
      sleep 0.2
    done
    if ss -ltnpH 2>/dev/null | grep "pid=$pid," | awk '{print $4}' \
        | grep -vE '^(127\.0\.0\.1|\[::ffff:127\.0\.0\.1\]):' | grep -q .; then
      die "$name broker $id listens on a non-loopback address"
    fi
  done
}

write_env() {
  local P=KCP_LIVE_${NAME^^}_ f=$CLUSTER_DIR/env id boot="" sasl="" mtls="" v1tls="" v1mtls="" pids=""
  for ((id = 1; id <= BROKERS; id++)); do
    boot+="${boot:+,}127.0.0.1:$(port_of "$PORT_BASE" "$id" 0)"
    sasl+="${sasl:+,}127.0.0.1:$(port_of "$PORT_BASE" "$id" 2)"
    mtls+="${mtls:+,}127.0.0.1:$(port_of "$PORT_BASE" "$id" 3)"
    v1tls+="${v1tls:+,}localhost:$(v1_port_of "$PORT_BASE" "$id" 0)"
    v1mtls+="${v1mtls:+,}localhost:$(v1_port_of "$PORT_BASE" "$id" 1)"
    pids+="${pids:+,}$(cat "$CLUSTER_DIR/broker-$id/pid")"
  done
  {
    echo "${P}NAME=$NAME"
    echo "${P}VERSION=$VERSION"
    echo "${P}BROKERS=$BROKERS"
    echo "${P}BOOTSTRAP=$boot"
    for ((id = 1; id <= BROKERS; id++)); do
      echo "${P}BROKER_${id}_BOOTSTRAP=127.0.0.1:$(port_of "$PORT_BASE" "$id" 0)"
    done
    echo "${P}BROKER_PIDS=$pids"
    echo "${P}RUN_DIR=$CLUSTER_DIR"
    echo "${P}CTL=$HERE/kafka.sh"
    if [ "$SASL_SSL" = 1 ]; then
      local tls=$CLUSTER_DIR/tls
      echo "${P}SASL_SSL_BOOTSTRAP=$sasl"
      echo "${P}MTLS_BOOTSTRAP=$mtls"
      echo "${P}V1_TLS_BOOTSTRAP=$v1tls"
      echo "${P}V1_MTLS_BOOTSTRAP=$v1mtls"
      echo "${P}V1_CA_PEM=$tls/v1-ca.pem"
      echo "${P}CA_PEM=$tls/ca.pem"
      echo "${P}OTHER_CA_PEM=$tls/other-ca.pem"
      echo "${P}CLIENT_CERT_PEM=$tls/client.pem"
      echo "${P}CLIENT_KEY_PEM=$tls/client.key"
      echo "${P}STORE_PASSWORD=$STORE_PASSWORD"
      if [ -f "$CLUSTER_DIR/oauth/jwks.json" ]; then
        echo "${P}OAUTH_JWT_KEY=$CLUSTER_DIR/oauth/jwt-key.pk8"
        echo "${P}OAUTH_AUDIENCE=kcp-live"
      fi
      echo "${P}SCRAM_USER=$SCRAM_USER"
      echo "${P}SCRAM_PASSWORD=$SCRAM_PASSWORD"
      echo "${P}PLAIN_USER=$PLAIN_USER"
      echo "${P}PLAIN_PASSWORD=$PLAIN_PASSWORD"
    fi
  } > "$f.tmp"
  mv "$f.tmp" "$f"
}

write_client_configs() {  # Java-client properties files for the secured listeners (also read by kcp)
  local tls=$CLUSTER_DIR/tls
  local mech
  for mech in SCRAM-SHA-256 SCRAM-SHA-512; do
    cat > "$CLUSTER_DIR/client-${mech,,}.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=$mech
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$SCRAM_USER" password="$SCRAM_PASSWORD";
ssl.truststore.type=PEM
ssl.truststore.location=$tls/ca.pem
EOF
  done
  cat > "$CLUSTER_DIR/client-plain.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="$PLAIN_USER" password="$PLAIN_PASSWORD";
ssl.truststore.type=PEM
ssl.truststore.location=$tls/ca.pem
EOF
  # The same for librdkafka (rdkafka_consumer.py --command-config): its own key names.
  for mech in SCRAM-SHA-256 SCRAM-SHA-512; do
    printf '%s\n' security.protocol=SASL_SSL "sasl.mechanism=$mech" "sasl.username=$SCRAM_USER" \
      "sasl.password=$SCRAM_PASSWORD" "ssl.ca.location=$tls/ca.pem" > "$CLUSTER_DIR/rdkafka-${mech,,}.properties"
  done
  printf '%s\n' security.protocol=SASL_SSL sasl.mechanism=PLAIN "sasl.username=$PLAIN_USER" \
    "sasl.password=$PLAIN_PASSWORD" "ssl.ca.location=$tls/ca.pem" > "$CLUSTER_DIR/rdkafka-plain.properties"
  printf '%s\n' security.protocol=SSL "ssl.ca.location=$tls/ca.pem" "ssl.certificate.location=$tls/client.pem" \
    "ssl.key.location=$tls/client.key" > "$CLUSTER_DIR/rdkafka-mtls.properties"
  cat > "$CLUSTER_DIR/client-mtls.properties" <<EOF
security.protocol=SSL
ssl.truststore.type=PEM
ssl.truststore.location=$tls/ca.pem
ssl.keystore.type=PEM
ssl.keystore.location=$tls/client-keystore.pem
EOF
  # As most Java-world files are written (issue 26): JKS and PKCS12 stores, and inline PEM
  # continued over lines with a backslash.
  cat > "$CLUSTER_DIR/client-scram-sha-512-jks.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$SCRAM_USER" password="$SCRAM_PASSWORD";
ssl.truststore.type=JKS
ssl.truststore.location=$tls/truststore.jks
ssl.truststore.password=$STORE_PASSWORD
EOF
  cat > "$CLUSTER_DIR/client-mtls-pkcs12.properties" <<EOF
security.protocol=SSL
ssl.truststore.type=PKCS12
ssl.truststore.location=$tls/truststore.p12
ssl.truststore.password=$STORE_PASSWORD
ssl.keystore.type=PKCS12
ssl.keystore.location=$tls/client-keystore.p12
ssl.keystore.password=$STORE_PASSWORD
EOF
  cat > "$CLUSTER_DIR/client-mtls-jks.properties" <<EOF
security.protocol=SSL
ssl.truststore.location=$tls/truststore.jks
ssl.truststore.password=$STORE_PASSWORD
ssl.keystore.location=$tls/client-keystore.jks
ssl.keystore.password=$STORE_PASSWORD
ssl.key.password=$STORE_PASSWORD
EOF
  # Confluent's recipe's client.properties for the v1 listeners: JKS stores, by host name.
  cat > "$CLUSTER_DIR/client-v1-tls.properties" <<EOF
security.protocol=SSL
ssl.truststore.location=$tls/v1-truststore.jks
ssl.truststore.password=$STORE_PASSWORD
EOF
  cat > "$CLUSTER_DIR/client-v1-mtls.properties" <<EOF
security.protocol=SSL
ssl.truststore.location=$tls/v1-truststore.jks
ssl.truststore.password=$STORE_PASSWORD
ssl.keystore.location=$tls/v1-client-keystore.jks
ssl.keystore.password=$STORE_PASSWORD
ssl.key.password=$STORE_PASSWORD
EOF
  {
    echo security.protocol=SSL
    echo ssl.truststore.type=PEM
    printf 'ssl.truststore.certificates='; continued_pem "$tls/ca.pem"
    echo ssl.keystore.type=PEM
    printf 'ssl.keystore.certificate.chain='; continued_pem "$tls/client.pem"
    printf 'ssl.keystore.key='; continued_pem "$tls/client.key"
  } > "$CLUSTER_DIR/client-mtls-inline-pem.properties"
}

continued_pem() {  # continued_pem FILE: the file as one properties value, each line but the last ended by " \"
  sed -e '$!s/$/ \\/' -e '2,$s/^/    /' "$1"
}

cmd_start() {
  [ $# -ge 1 ] || usage
  NAME=$1; shift
  valid_name "$NAME"
  VERSION="" PORT_BASE="" BROKERS=1 SASL_SSL=0 OAUTH=0 OFFSETS_CODEC=""
  EXTRA_CONFIGS=() EXTRA_FEATURES=()
  while [ $# -gt 0 ]; do
    case $1 in
      --version) VERSION=$2; shift 2 ;;
      --port-base) PORT_BASE=$2; shift 2 ;;
      --brokers) BROKERS=$2; shift 2 ;;
      --sasl-ssl) SASL_SSL=1; shift ;;
      --config)
        [[ ${2:-} =~ ^[a-z][a-z0-9._-]*=[^[:cntrl:]]*$ ]] || die "--config: KEY=VALUE (one line), got '${2:-}'"
        EXTRA_CONFIGS+=("$2"); shift 2 ;;
      --feature)
        [[ ${2:-} =~ ^[a-z][a-z.]*=[0-9]+$ ]] || die "--feature: NAME=LEVEL, got '${2:-}'"
        EXTRA_FEATURES+=("$2"); shift 2 ;;
      --offsets-compression) OFFSETS_CODEC=$2; shift 2 ;;
      --oauth) OAUTH=1; shift ;;
      *) usage ;;
    esac
  done
  known_version "$VERSION" || die "--version: one of ${VERSIONS[*]}"
  [[ $PORT_BASE =~ ^[0-9]+$ ]] || die "--port-base: a port number"
  [[ $BROKERS =~ ^[1-9]$ ]] || die "--brokers: 1 to 9"
  case $OFFSETS_CODEC in
    ""|none|gzip|snappy|lz4|zstd) ;;
    *) die "--offsets-compression: none, gzip, snappy, lz4 or zstd" ;;
  esac
  [ "$OAUTH" = 0 ] || [ "$SASL_SSL" = 1 ] || die "--oauth needs --sasl-ssl (OAUTHBEARER is served on the SASL_SSL listener)"
  need_fetched "$VERSION"
  local t0=$SECONDS id
  CLUSTER_DIR=$RUN/$NAME
  if [ -d "$CLUSTER_DIR" ]; then
    local old
    for old in "$CLUSTER_DIR"/broker-*/pid; do
      [ -f "$old" ] && alive "$(cat "$old")" && die "cluster $NAME is running: stop it first"
    done
    rm -rf "$CLUSTER_DIR"
  fi
  local last=$((PORT_BASE + 4 * BROKERS - 1)) p
  [ "$SASL_SSL" = 1 ] && last=$((PORT_BASE + 6 * BROKERS - 1))
  for ((p = PORT_BASE; p <= last; p++)); do
    port_busy "$p" && die "port $p (in $PORT_BASE-$last) is in use"
  done
  mkdir -p "$CLUSTER_DIR"
  echo "$VERSION" > "$CLUSTER_DIR/version"
  echo "$PORT_BASE $BROKERS $SASL_SSL" > "$CLUSTER_DIR/layout"
  CLUSTER_ID=$(cluster_id)
  OFFSETS_PARTITIONS=1
  VOTERS=""
  for ((id = 1; id <= BROKERS; id++)); do
    VOTERS+="${VOTERS:+,}$id@127.0.0.1:$(port_of "$PORT_BASE" "$id" 1)"
  done
  if [ "$SASL_SSL" = 1 ]; then
    SCRAM_USER=kcp-scram SCRAM_PASSWORD=scram-$(openssl rand -hex 12)
    PLAIN_USER=kcp-plain PLAIN_PASSWORD=plain-$(openssl rand -hex 12)
    STORE_PASSWORD=store-$(openssl rand -hex 8)
    command -v keytool >/dev/null || die "keytool (a JDK) is needed for --sasl-ssl's stores"
    make_tls "$CLUSTER_DIR/tls"
    make_tls_v1 "$CLUSTER_DIR/tls"
    if [ "$OAUTH" = 1 ]; then make_oauth "$CLUSTER_DIR/oauth"; fi
    write_client_configs
  fi
  local pids=()
  for ((id = 1; id <= BROKERS; id++)); do
    local dir=$CLUSTER_DIR/broker-$id
    mkdir -p "$dir/data"
    write_log_config "$dir"
    write_server_properties "$dir" "$id"
    format_broker "$dir" & pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || die "formatting failed"; done
  log "starting $NAME: Kafka $VERSION, $BROKERS broker(s), cluster $CLUSTER_ID, ports $PORT_BASE-$last"
  for ((id = 1; id <= BROKERS; id++)); do launch_broker "$NAME" "$id"; done
  local ids=()
  for ((id = 1; id <= BROKERS; id++)); do ids+=("$id"); done
  if ! (wait_ready "$NAME" "${ids[@]}"); then
    stop_cluster "$NAME"
    die "$NAME did not start"
  fi
  write_env
  echo $((SECONDS - t0)) > "$CLUSTER_DIR/start-seconds"
  log "$NAME ready in $((SECONDS - t0)) s: $(grep _BOOTSTRAP= "$CLUSTER_DIR/env" | head -1 | cut -d= -f2)"
}

# ---------------------------------------------------------------- stop / faults
kill_clients() {  # kill_clients NAME: the registered client process groups
  local f=$RUN/$1/clients.pids pid
  [ -f "$f" ] || return 0
  while read -r pid; do
    [ -n "$pid" ] || continue
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  done < "$f"
  rm -f "$f"
}

stop_cluster() {  # stop_cluster NAME: clients, then every broker in parallel (bounded)
  local name=$1 cdir=$RUN/$1 f pids=()
  [ -d "$cdir" ] || return 0
  kill_clients "$name"
  for f in "$cdir"/broker-*/pid; do
    [ -f "$f" ] || continue
    stop_pid "$(cat "$f")" "$STOP_TIMEOUT_S" & pids+=($!)
  done
  for f in "${pids[@]}"; do wait "$f" || true; done
  rm -f "$cdir"/broker-*/pid "$cdir/env"
}

cmd_stop() {
  [ $# -eq 1 ] || usage
  valid_name "$1"
  stop_cluster "$1"
  log "stopped $1"
}

cmd_stop_all() {
  [ -d "$RUN" ] || return 0
  local d pids=()
  for d in "$RUN"/*/; do
    [ -f "$d/version" ] || continue
    stop_cluster "$(basename "$d")" & pids+=($!)
  done
  for d in "${pids[@]}"; do wait "$d" || true; done
  log "stopped every cluster under $RUN"
}

broker_dir() {  # broker_dir NAME ID
  valid_name "$1"
  [[ $2 =~ ^[1-9]$ ]] || die "broker id: 1 to 9"
  local dir=$RUN/$1/broker-$2
  [ -f "$dir/server.properties" ] || die "cluster $1 has no broker $2"
  echo "$dir"
}

cmd_kill_broker() {
  [ $# -eq 2 ] || usage
  local dir pid
  dir=$(broker_dir "$1" "$2")
  pid=$(cat "$dir/pid" 2>/dev/null || true)
  alive "$pid" || die "$1 broker $2 is not running"
  kill -KILL "$pid"
  local i
  for ((i = 0; i < 50; i++)); do alive "$pid" || break; sleep 0.1; done
  log "killed $1 broker $2 (pid $pid)"
}

cmd_restart_broker() {
  [ $# -eq 2 ] || usage
  local dir pid t0=$SECONDS
  dir=$(broker_dir "$1" "$2")
  pid=$(cat "$dir/pid" 2>/dev/null || true)
  alive "$pid" && stop_pid "$pid" "$STOP_TIMEOUT_S"
  launch_broker "$1" "$2"
  wait_ready "$1" "$2"
  # the env file lists the broker pids
  local P=KCP_LIVE_${1^^}_ pids="" f
  for f in "$RUN/$1"/broker-*/pid; do pids+="${pids:+,}$(cat "$f")"; done
  [ -f "$RUN/$1/env" ] && sed -i "s/^${P}BROKER_PIDS=.*/${P}BROKER_PIDS=$pids/" "$RUN/$1/env"
  log "restarted $1 broker $2 in $((SECONDS - t0)) s"
}

cmd_env() {
  [ $# -eq 1 ] || usage
  valid_name "$1"
  [ -f "$RUN/$1/env" ] || die "cluster $1 is not running (no $RUN/$1/env)"
  sed 's/^/export /' "$RUN/$1/env"
}

cmd_status() {
  [ -d "$RUN" ] || { echo "no clusters under $RUN"; return 0; }
  local d f id
  for d in "$RUN"/*/; do
    [ -f "$d/version" ] || continue
    printf '%s (Kafka %s):' "$(basename "$d")" "$(cat "$d/version")"
    for f in "$d"broker-*/server.properties; do
      id=$(basename "$(dirname "$f")"); id=${id#broker-}
      if alive "$(cat "$d/broker-$id/pid" 2>/dev/null || true)"; then printf ' %s=up' "$id"; else printf ' %s=down' "$id"; fi
    done
    echo
  done
}

# ---------------------------------------------------------------- clients
register_client() { mkdir -p "$RUN/$1" && echo "$$" >> "$RUN/$1/clients.pids"; }

cmd_java() {  # java NAME CLASS ARGS...: the cluster's kafka-clients version
  [ $# -ge 2 ] || usage
  local name=$1 class=$2 version
  shift 2
  valid_name "$name"
  version=$(cat "$RUN/$name/version" 2>/dev/null) || die "cluster $name was never started"
  need_fetched "$version"
  register_client "$name"
  exec java -Xms32m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \
    -cp "$(classes_dir "$version"):$CACHE/clients-$version/*" "kcp.live.$class" "$@"
}

cmd_rdkafka() {  # rdkafka NAME ARGS...
  [ $# -ge 1 ] || usage
  local name=$1
  shift
  valid_name "$name"
  [ -x "$CACHE/venv/bin/python" ] || die "the Python venv is missing: run tools/live/kafka.sh fetch"
  register_client "$name"
  exec "$CACHE/venv/bin/python" -u "$HERE/rdkafka_consumer.py" "$@"
}

# tool NAME|VERSION TOOL ARGS...: one of Kafka's own command-line tools, as its kafka-*.sh script runs
# it (kafka-run-class.sh's JVM options unless KCP_LIVE_TOOL_JAVA_OPTS is set), with the classpath of
# `fetch`'s tools-VERSION directory (one SLF4J binding, slf4j-simple at WARN on stderr, as the
# distribution's tools-log4j configuration). NAME: a cluster started here (its version is used).
tool_class() {
  case $1 in
    consumer-groups | kafka-consumer-groups | kafka-consumer-groups.sh)
      echo org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
    dump-log | kafka-dump-log | kafka-dump-log.sh) echo kafka.tools.DumpLogSegments ;;
    get-offsets | kafka-get-offsets | kafka-get-offsets.sh) echo org.apache.kafka.tools.GetOffsetShell ;;
    topics | kafka-topics | kafka-topics.sh) echo org.apache.kafka.tools.TopicCommand ;;
    console-consumer | kafka-console-consumer | kafka-console-consumer.sh)
      echo org.apache.kafka.tools.consumer.ConsoleConsumer ;;
    *.*) echo "$1" ;;
    *) die "tool '$1': consumer-groups, dump-log, get-offsets, topics, console-consumer or a class name" ;;
  esac
}

cmd_tool() {
  [ $# -ge 2 ] || usage
  local target=$1 class version dir
  class=$(tool_class "$2")
  shift 2
  if known_version "$target"; then
    version=$target
  else
    valid_name "$target"
    version=$(cat "$RUN/$target/version" 2>/dev/null) || die "'$target' is neither a version (${VERSIONS[*]}) nor a cluster started under $RUN"
  fi
  dir=$(tools_dir "$version")
  [ -f "$dir/.complete" ] || die "Kafka $version's tools are not fetched: run tools/live/kafka.sh fetch"
  local opts=(-Xmx256M -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
    -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true)
  # shellcheck disable=SC2206
  [ -n "${KCP_LIVE_TOOL_JAVA_OPTS:-}" ] && opts=($KCP_LIVE_TOOL_JAVA_OPTS)
  exec java "${opts[@]}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \
    -cp "$dir/*" "$class" "$@"
}

# ---------------------------------------------------------------- main
[ $# -ge 1 ] || usage
sub=$1; shift
case $sub in
  fetch) cmd_fetch "$@" ;;
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  stop-all) cmd_stop_all "$@" ;;
  kill-broker) cmd_kill_broker "$@" ;;
  restart-broker) cmd_restart_broker "$@" ;;
  env) cmd_env "$@" ;;
  status) cmd_status "$@" ;;
  java) cmd_java "$@" ;;
  rdkafka) cmd_rdkafka "$@" ;;
  tool) cmd_tool "$@" ;;
  -h | --help | help) usage ;;
  *) usage ;;
esac
