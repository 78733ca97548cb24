#!/usr/bin/python3
"""gRPC health probe for the hyloop services (Debian ships no grpc_health_probe).

    /usr/bin/python3 healthcheck.py [--service NAME] [--timeout SECONDS] HOST:PORT

Calls grpc.health.v1.Health/Check on HOST:PORT and exits 0 when the answer is SERVING, 1 when the
service answers anything else (NOT_SERVING, UNKNOWN, or NOT_FOUND for an unknown --service name),
2 when it cannot be reached or the call fails. The two messages are encoded and decoded by hand
(protobuf wire format), so no generated stubs are needed, only Debian's python3-grpcio:

    message HealthCheckRequest  { string service = 1; }
    message HealthCheckResponse { ServingStatus status = 1; }   // enum, varint
"""

import argparse
import sys

import grpc

METHOD = "/grpc.health.v1.Health/Check"
STATUS_NAMES = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}
SERVING = 1


def encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def decode_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def encode_request(service: str) -> bytes:
    """HealthCheckRequest: field 1 (service), wire type 2 (length-delimited); empty = default."""
    if not service:
        return b""
    raw = service.encode("utf-8")
    return b"\x0a" + encode_varint(len(raw)) + raw


def decode_response(data: bytes) -> int:
    """HealthCheckResponse: returns field 1 (status, varint); 0 (UNKNOWN) when absent.

    Unknown fields are skipped, as protobuf parsers do."""
    status = 0
    pos = 0
    while pos < len(data):
        key, pos = decode_varint(data, pos)
        field, wire_type = key >> 3, key & 0x7
        if wire_type == 0:
            value, pos = decode_varint(data, pos)
            if field == 1:
                status = value
        elif wire_type == 1:
            pos += 8
        elif wire_type == 2:
            length, pos = decode_varint(data, pos)
            pos += length
        elif wire_type == 5:
            pos += 4
        else:
            raise ValueError(f"unsupported wire type {wire_type}")
        if pos > len(data):
            raise ValueError("truncated message")
    return status


def check(address: str, service: str, timeout: float, ca_file: str = "") -> int:
    # The probe talks to a service beside it: never through an HTTP proxy from the environment.
    # The health service needs no token; a TLS server needs the lab's CA (--ca).
    options = [("grpc.enable_http_proxy", 0)]
    if ca_file:
        with open(ca_file, "rb") as f:
            credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
        channel = grpc.secure_channel(address, credentials, options=options)
    else:
        channel = grpc.insecure_channel(address, options=options)
    with channel:
        call = channel.unary_unary(
            METHOD,
            request_serializer=lambda b: b,
            response_deserializer=lambda b: b,
        )
        reply = call(encode_request(service), timeout=timeout, wait_for_ready=False)
    return decode_response(reply)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="gRPC health check (grpc.health.v1.Health/Check)")
    parser.add_argument("address", help="HOST:PORT of the service")
    parser.add_argument("--service", default="", help="service name to ask about ('' = server)")
    parser.add_argument("--timeout", type=float, default=2.0, help="deadline in seconds")
    parser.add_argument("--quiet", action="store_true", help="print nothing")
    parser.add_argument("--ca", default="",
                        help="CA certificate of a TLS server (the security directory's ca.crt); "
                             "without it: plaintext (a service started with --insecure)")
    args = parser.parse_args(argv)
    try:
        status = check(args.address, args.service, args.timeout, args.ca)
    except grpc.RpcError as e:
        if e.code() == grpc.StatusCode.NOT_FOUND:  # the server's answer for an unknown name
            if not args.quiet:
                print(f"{args.address}: SERVICE_UNKNOWN ({args.service})")
            return 1
        if not args.quiet:
            print(f"{args.address}: {e.code().name}: {e.details()}", file=sys.stderr)
        return 2
    except ValueError as e:
        if not args.quiet:
            print(f"{args.address}: malformed HealthCheckResponse: {e}", file=sys.stderr)
        return 2
    name = STATUS_NAMES.get(status, str(status))
    if not args.quiet:
        print(f"{args.address}: {name}")
    return 0 if status == SERVING else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
