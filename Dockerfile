# Goblin's image: one statically linked goblind and nothing else. Nothing
# is pulled (FROM scratch), so it builds where no image registry answers.
# Build it with scripts/docker-image.sh, which compiles goblind with
# CGO_ENABLED=0 and runs `docker build` on a context holding only the
# binary, NOTICE and this file.
FROM scratch
COPY goblind /goblind
COPY NOTICE /NOTICE
ENV GOBLIN_ADDR=0.0.0.0:6379 \
    GOBLIN_RAFT_ADDR=0.0.0.0:16379 \
    GOBLIN_GOSSIP_ADDR=0.0.0.0:7946 \
    GOBLIN_DATA=/data
VOLUME /data
# RESP (clients), Raft, gossip (TCP and UDP).
EXPOSE 6379 16379 7946 7946/udp
HEALTHCHECK --interval=2s --timeout=2s --start-period=5s --retries=5 \
    CMD ["/goblind", "ping", "--addr", "127.0.0.1:6379"]
ENTRYPOINT ["/goblind"]
