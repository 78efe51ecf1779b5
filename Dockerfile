# syntax=docker/dockerfile:1
# Berth: berthd (daemon) and berth (CLI) in a small non-root image.
#   docker build -t berth .
#   docker run -p 8091:8091 -e BERTH_BASIC_AUTH="admin1:$(openssl rand -base64 24)" -v berth-data:/var/lib/berth berth

# --- build: the release binaries from the locked dependency tree ------------------------------
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p berthd -p berth \
    && mkdir -p /out/bin /out/var/lib/berth /out/etc/berth \
    && cp target/release/berthd target/release/berth /out/bin/ \
    && cp examples/inventory.yaml /out/etc/berth/inventory.yaml

# --- run: glibc and libgcc only, no shell, no package manager ---------------------------------
FROM gcr.io/distroless/cc-debian12:nonroot AS run
COPY --from=build /out/bin/berthd /out/bin/berth /usr/local/bin/
COPY --from=build /out/etc/berth /etc/berth
# The data volume belongs to the image's non-root user (distroless `nonroot`, 65532).
COPY --from=build --chown=65532:65532 /out/var/lib/berth /var/lib/berth
USER 65532:65532
WORKDIR /var/lib/berth
VOLUME ["/var/lib/berth"]
# Off loopback berthd refuses to start without credentials: set BERTH_BASIC_AUTH (user:password)
# or BERTH_TOKENS. `postgres://…` in BERTH_DATABASE_URL shares state between replicas.
ENV BERTH_LISTEN=0.0.0.0:8091 \
    BERTH_DATABASE_URL=sqlite:///var/lib/berth/berth.db \
    BERTH_INVENTORY=/etc/berth/inventory.yaml
EXPOSE 8091
HEALTHCHECK --interval=15s --timeout=6s --start-period=20s --retries=3 \
    CMD ["/usr/local/bin/berthd", "--healthcheck"]
ENTRYPOINT ["/usr/local/bin/berthd"]
