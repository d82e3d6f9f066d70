# syntax=docker/dockerfile:1
# One image holding the three roles: /usr/local/bin/aggregator, core-apiserver and
# extensions-apiserver (deploy/manifests picks one per Deployment with `command`).
#
#   docker build -t kas:0.1.0 .
#
# Build stage: the workspace's toolchain (rust-version in Cargo.toml), the locked
# dependencies, release profile. protoc comes from the repository (.cargo/config.toml).
FROM rust:1.90-bookworm AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked \
        -p aggregator -p core-apiserver -p extensions-apiserver \
 && mkdir -p /out \
 && cp target/release/aggregator target/release/core-apiserver \
       target/release/extensions-apiserver /out/

# Runtime: glibc and libgcc only (the binaries link nothing else), no shell, no package
# manager, user 65532 "nonroot".
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
USER 65532:65532
EXPOSE 6443
ENTRYPOINT ["/usr/local/bin/aggregator"]
