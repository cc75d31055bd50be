# conform in a container: the static binary (CGO_ENABLED=0) on an empty base, with the CA
# certificates it needs for https endpoints. `make image` builds the binary and the context
# (scripts/image.sh); no registry is needed.
#
#   docker run --rm --network host -e CONN="$CONN" conform:local run --backend me=env:CONN
FROM scratch
COPY rootfs/ /
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["/conform"]
CMD ["--help"]
