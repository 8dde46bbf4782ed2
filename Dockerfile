# syntax=docker/dockerfile:1
FROM golang:1.26-bookworm AS build
WORKDIR /src
# Dependencies first, so code changes do not re-download modules.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/waitroom ./cmd/waitroom

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/waitroom /waitroom
COPY configs/waitroom.yaml /etc/waitroom/waitroom.yaml
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/waitroom"]
CMD ["serve", "--config", "/etc/waitroom/waitroom.yaml"]
