# syntax=docker/dockerfile:1
# Container images of meshjob. BuildKit builds only the stages the target needs.
#
#   docker build -t meshjob .                               the meshjob image (default)
#   docker build --target argocd-cmp -t meshjob-cmp .       the Argo CD plugin sidecar
#   docker run --rm -v "$PWD:/work" -w /work meshjob check .
#
# The binary is compiled from this source, statically linked against musl, so it runs on
# any Linux base. The release workflow passes `--build-arg MESHJOB_BINARY=prebuilt` with the
# binaries of its static musl archives in dist/linux-amd64/ and dist/linux-arm64/ instead, so
# the image it publishes holds exactly the released bytes.
ARG MESHJOB_BINARY=source

FROM rust:1-alpine3.22 AS source
# musl-dev: the C runtime objects the linker needs on Alpine.
# hadolint ignore=DL3018
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY bench/stages.rs bench/
COPY src src/
RUN cargo build --release --locked \
    && install -D -m 0755 target/release/meshjob /out/meshjob

FROM scratch AS prebuilt
ARG TARGETARCH
COPY --chmod=0755 dist/linux-${TARGETARCH}/meshjob /out/meshjob

FROM ${MESHJOB_BINARY} AS binary

# The sidecar for the plugins in integrations/argocd/ (docs/argocd-flux.md): their generate
# commands run `sh -c` with mktemp, kustomize or helm, and meshjob, as user 999, which Argo
# CD requires of a plugin sidecar (argoproj/argo-cd@8102f46,
# docs/operator-manual/config-management-plugins.md). Alpine's community repository packages
# kustomize and helm (alpinelinux/aports@dfa5f0f community/kustomize/APKBUILD,
# alpinelinux/aports@c65244d community/helm/APKBUILD).
FROM alpine:3.22 AS argocd-cmp
# Unpinned on purpose: Alpine drops superseded package versions from its mirrors, so a pin
# would break the build; the base image tag fixes the release line.
# hadolint ignore=DL3018
RUN apk add --no-cache kustomize helm
COPY --from=binary /out/meshjob /usr/local/bin/meshjob
USER 999

# The meshjob image: the static binary on distroless/static (no shell, no package manager),
# as a non-root user.
FROM gcr.io/distroless/static-debian12:nonroot AS meshjob
COPY --from=binary /out/meshjob /usr/local/bin/meshjob
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/meshjob"]
CMD ["--help"]
