#!/usr/bin/env python3
"""Charter from Python, through stubs generated from proto/charter/v1.

The flow of an agent deployment, end to end:

  1. the orchestrator issues a task grant        (GrantService.IssueGrant)
  2. the worker fetches its tool catalog         (CatalogService.GetCatalog, OpenAI Chat dialect)
  3. the gateway authorizes three tool calls     (AuthorityService.Authorize):
       issue_refund amount 40   -> allow, with a signed receipt
       run_shell                -> deny EXPLICIT_DENY
       issue_refund amount 250  -> require approval (requirement "manager")
  4. a tool service verifies the allow receipt OFFLINE: it reads the JWKS once
     (KeyService.GetJwks) and checks the Ed25519 signature and the claims itself,
     without asking Charter again.

Needs only the standard library, grpcio, protobuf and cryptography (on Debian:
python3-grpcio python3-protobuf python3-cryptography). Generate the stubs first with
examples/python/generate.sh; see examples/python/README.md.

Exits 0 and prints "python example: ok" when every step gives the expected result;
otherwise prints "python example: FAILED: <why>" on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import sys
import time
from types import SimpleNamespace
from typing import Any, NoReturn

RECEIPT_TYP = "charter-receipt+jwt"


class ExampleFailure(Exception):
    """A step did not give the expected result."""


def fail(message: str) -> NoReturn:
    raise ExampleFailure(message)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Charter's issue -> catalog -> authorize -> verify flow from Python.")
    parser.add_argument("--address", required=True, help="host:port of a Charter server, e.g. 127.0.0.1:50051")
    parser.add_argument("--stubs", required=True, help="directory the Python stubs were generated into (generate.sh OUT)")
    parser.add_argument("--issuer", default="charter-demo", help="expected `iss` of receipts (default: charter-demo, as `npm start` serves)")
    parser.add_argument("--audience", default="charter-demo", help="expected `aud` of receipts (default: charter-demo)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the server and for each call (default: 10)")
    parser.add_argument(
        "--tamper-receipt",
        action="store_true",
        help="alter the allow receipt's payload before verifying it, to show that the local check refuses it (exits 1)",
    )
    return parser.parse_args(argv)


def import_dependencies(stubs: str) -> SimpleNamespace:
    """Imports grpc, protobuf, cryptography and the generated stubs, naming whatever is missing."""
    missing = []
    for module, package in (("grpc", "python3-grpcio"), ("google.protobuf", "python3-protobuf"), ("cryptography", "python3-cryptography")):
        try:
            __import__(module)
        except ImportError:
            missing.append(f"{module} (Debian package {package})")
    if missing:
        fail(f"missing Python modules for {sys.executable}: {', '.join(missing)}")
    sys.path.insert(0, stubs)
    try:
        # Imported here because the stubs directory is only known at run time.
        from charter.v1 import (
            authority_pb2,
            authority_pb2_grpc,
            catalog_pb2,
            catalog_pb2_grpc,
            common_pb2,
            grant_pb2,
            grant_pb2_grpc,
            key_pb2,
            key_pb2_grpc,
        )
    except ImportError as error:
        fail(f"cannot import the generated stubs from {stubs!r} ({error}); run examples/python/generate.sh {stubs} first")
    return SimpleNamespace(
        authority_pb2=authority_pb2,
        authority_pb2_grpc=authority_pb2_grpc,
        catalog_pb2=catalog_pb2,
        catalog_pb2_grpc=catalog_pb2_grpc,
        common_pb2=common_pb2,
        grant_pb2=grant_pb2,
        grant_pb2_grpc=grant_pb2_grpc,
        key_pb2=key_pb2,
        key_pb2_grpc=key_pb2_grpc,
    )


# ---------------------------------------------------------------------------------------------
# Offline receipt verification: nothing here talks to the server.
# ---------------------------------------------------------------------------------------------


def b64url_decode(part: str) -> bytes:
    """Decodes unpadded base64url (RFC 7515 section 2), refusing anything else."""
    if "=" in part or any(c in part for c in "+/"):
        raise ValueError("not unpadded base64url")
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def verify_receipt(token: str, jwks: dict[str, Any], *, issuer: str, audience: str, now: int) -> tuple[str, dict[str, Any]]:
    """Verifies a Charter receipt (a compact JWS) against a JWKS; returns the key id and the claims.

    Checks, in order: the JWS shape; the protected header (alg EdDSA only, typ
    charter-receipt+jwt, a kid the JWKS publishes as an Ed25519 key); the Ed25519
    signature over `header.payload`; then the claims: iss, aud, exp not passed.
    The caller then checks that the claims bind the call it is about to run.
    """
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    parts = token.split(".")
    if len(parts) != 3:
        fail("receipt is not a compact JWS (expected three dot-separated parts)")
    header_b64, payload_b64, signature_b64 = parts
    try:
        header = json.loads(b64url_decode(header_b64))
        payload = b64url_decode(payload_b64)
        signature = b64url_decode(signature_b64)
    except (ValueError, binascii.Error) as error:
        fail(f"receipt is not three base64url parts with a JSON header: {error}")
    if not isinstance(header, dict):
        fail("receipt header is not a JSON object")
    # Only EdDSA: never let the token choose a weaker algorithm (or "none").
    if header.get("alg") != "EdDSA":
        fail(f"receipt alg is {header.get('alg')!r}, expected 'EdDSA'")
    if header.get("typ") != RECEIPT_TYP:
        fail(f"receipt typ is {header.get('typ')!r}, expected {RECEIPT_TYP!r} (a grant token is not a receipt)")
    kid = header.get("kid")
    key = next((k for k in jwks.get("keys", []) if isinstance(k, dict) and k.get("kid") == kid), None)
    if not isinstance(kid, str) or key is None:
        fail(f"receipt kid {kid!r} is not in the JWKS")
    if key.get("kty") != "OKP" or key.get("crv") != "Ed25519" or key.get("alg", "EdDSA") != "EdDSA":
        fail(f"JWKS key {kid} is not an Ed25519 (OKP) EdDSA key")
    try:
        public_key = Ed25519PublicKey.from_public_bytes(b64url_decode(key["x"]))
    except (KeyError, TypeError, ValueError, binascii.Error) as error:
        fail(f"JWKS key {kid} has no usable Ed25519 public key: {error}")

    signing_input = f"{header_b64}.{payload_b64}".encode("ascii")
    try:
        public_key.verify(signature, signing_input)
    except InvalidSignature:
        fail(f"receipt signature does not verify against JWKS key {kid}: the receipt was altered or not signed by Charter")

    # The signature holds, so the payload is what Charter signed; now check what it says.
    try:
        claims = json.loads(payload)
    except ValueError as error:
        fail(f"receipt payload is not JSON: {error}")
    if not isinstance(claims, dict):
        fail("receipt payload is not a JSON object")
    if claims.get("iss") != issuer:
        fail(f"receipt iss is {claims.get('iss')!r}, expected {issuer!r} (pass the server's issuer with --issuer)")
    aud = claims.get("aud")
    if not (aud == audience or (isinstance(aud, list) and audience in aud)):
        fail(f"receipt aud is {aud!r}, expected {audience!r} (pass the server's audience with --audience)")
    exp = claims.get("exp")
    if not isinstance(exp, int) or isinstance(exp, bool):
        fail("receipt has no numeric exp")
    if exp <= now:
        fail(f"receipt expired at {exp} (now {now})")
    for name in ("sub", "jti", "grant_id", "action_id", "tool_name", "call_id", "args_digest", "catalog_version"):
        if not isinstance(claims.get(name), str):
            fail(f"receipt claim {name} is missing or not a string")
    return kid, claims


def tamper(token: str) -> str:
    """Re-encodes the payload with exp pushed a day later, keeping the original signature.

    Only the signature protects exp, so this shows that the local check really verifies it.
    """
    header_b64, payload_b64, signature_b64 = token.split(".")
    claims = json.loads(b64url_decode(payload_b64))
    claims["exp"] = int(claims["exp"]) + 86_400
    forged = b64url_encode(json.dumps(claims, separators=(",", ":")).encode("utf-8"))
    return f"{header_b64}.{forged}.{signature_b64}"


# ---------------------------------------------------------------------------------------------
# The flow
# ---------------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> None:
    pb = import_dependencies(args.stubs)
    import grpc  # present: import_dependencies checked it

    # Charter listens on loopback only: do not route this channel through an HTTP proxy
    # that the environment (http_proxy, grpc_proxy) may configure.
    with grpc.insecure_channel(args.address, options=[("grpc.enable_http_proxy", 0)]) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=args.timeout)
        except grpc.FutureTimeoutError:
            fail(f"no Charter server answered at {args.address} within {args.timeout:g}s")
        grant, allowed, jwks = talk_to_charter(pb, channel, args.timeout)
    # From here on nothing talks to the server: a tool service checks the receipt by itself.
    check_receipt(allowed, grant, jwks, args)


def talk_to_charter(pb: SimpleNamespace, channel: Any, timeout: float) -> tuple[Any, Any, dict[str, Any]]:
    """Issue -> catalog -> three verdicts -> JWKS. Returns the grant, the allow verdict and the JWKS."""
    import grpc

    common = pb.common_pb2
    decision_name = common.Decision.Name
    grants = pb.grant_pb2_grpc.GrantServiceStub(channel)
    catalog = pb.catalog_pb2_grpc.CatalogServiceStub(channel)
    authority = pb.authority_pb2_grpc.AuthorityServiceStub(channel)
    keys = pb.key_pb2_grpc.KeyServiceStub(channel)

    def call(what: str, method: Any, request: Any) -> Any:
        try:
            return method(request, timeout=timeout)
        except grpc.RpcError as error:
            fail(f"{what} failed: {error.code().name}: {error.details()}")

    # 1. The orchestrator issues a task grant for the owner's assistant.
    issued = call(
        "IssueGrant",
        grants.IssueGrant,
        pb.grant_pb2.IssueGrantRequest(
            profile="owner-assistant",
            subject="agent:python-example",
            owner="ana@example.com",
            purpose="python example",
        ),
    )
    if issued.grant_token.count(".") != 2:
        fail("IssueGrant returned no compact JWS grant token")
    grant = issued.grant
    print(f"grant {grant.id}: profile {grant.profile}, {len(grant.allowed)} allowed, "
          f"{len(grant.approval_required)} need approval, {len(grant.denied)} denied")

    # 2. The worker fetches the tools its model may see, rendered for OpenAI Chat Completions.
    got = call(
        "GetCatalog",
        catalog.GetCatalog,
        pb.catalog_pb2.GetCatalogRequest(grant_token=issued.grant_token, dialect=common.DIALECT_OPENAI_CHAT),
    )
    try:
        names = [tool["function"]["name"] for tool in json.loads(got.rendered_tools_json)]
    except (ValueError, KeyError, TypeError) as error:
        fail(f"GetCatalog's rendered_tools_json is not an OpenAI Chat tools array: {error}")
    print(f"catalog ({len(names)} tools, openai_chat): {', '.join(names)}")
    if "issue_refund" not in names:
        fail("the catalog lacks issue_refund, which owner-assistant grants")
    if "run_shell" in names:
        fail("the catalog shows run_shell, which the policy denies: denied tools must be absent")

    # 3. The gateway authorizes three calls before running them.
    def authorize(call_id: str, tool: str, arguments: dict[str, Any]) -> Any:
        response = call(
            f"Authorize {tool}",
            authority.Authorize,
            pb.authority_pb2.AuthorizeRequest(
                grant_token=issued.grant_token,
                call=common.ToolCall(call_id=call_id, tool_name=tool, arguments_json=json.dumps(arguments)),
            ),
        )
        v = response.verdict
        print(f"verdict {call_id} {tool}: {decision_name(v.decision)} "
              f"reason={v.reason.code or '-'} requirement={v.requirement or '-'}")
        return v

    def refund(amount: int) -> dict[str, Any]:
        return {"order_id": "ord_A1B2C3", "amount": amount, "currency": "EUR", "reason": "damaged"}

    allowed = authorize("call-allow", "issue_refund", refund(40))
    if allowed.decision != common.DECISION_ALLOW:
        fail(f"issue_refund amount 40: expected DECISION_ALLOW, got {decision_name(allowed.decision)} {allowed.reason.code}")
    if not allowed.receipt:
        fail("the allow verdict carries no receipt")

    denied = authorize("call-deny", "run_shell", {"command": "ls"})
    if denied.decision != common.DECISION_DENY or denied.reason.code != "EXPLICIT_DENY":
        fail(f"run_shell: expected DECISION_DENY EXPLICIT_DENY, got {decision_name(denied.decision)} {denied.reason.code or '-'}")
    if denied.receipt:
        fail("the deny verdict carries a receipt")

    held = authorize("call-approval", "issue_refund", refund(250))
    if held.decision != common.DECISION_REQUIRE_APPROVAL or held.requirement != "manager":
        fail(f"issue_refund amount 250: expected DECISION_REQUIRE_APPROVAL (manager), "
             f"got {decision_name(held.decision)} requirement={held.requirement or '-'}")
    if held.receipt:
        fail("the require-approval verdict carries a receipt")

    # 4. A tool service reads the JWKS once (and caches it), then checks receipts locally.
    jwks_response = call("GetJwks", keys.GetJwks, pb.key_pb2.GetJwksRequest())
    try:
        jwks = json.loads(jwks_response.jwks_json)
    except ValueError as error:
        fail(f"GetJwks returned JSON that does not parse: {error}")
    if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list) or not jwks["keys"]:
        fail("GetJwks returned no keys")
    return grant, allowed, jwks


def check_receipt(allowed: Any, grant: Any, jwks: dict[str, Any], args: argparse.Namespace) -> None:
    """Verifies the allow verdict's receipt offline and that it binds exactly that call."""
    receipt = allowed.receipt
    if args.tamper_receipt:
        receipt = tamper(receipt)
        print("tampered with the receipt: exp pushed one day later, signature kept")
    now = int(time.time())
    kid, claims = verify_receipt(receipt, jwks, issuer=args.issuer, audience=args.audience, now=now)
    expected = {
        "args_digest": allowed.call_digest,
        "call_id": allowed.call_id,
        "jti": allowed.decision_id,
        "grant_id": grant.id,
        "action_id": allowed.action_id,
        "tool_name": allowed.tool_name,
        "sub": grant.subject,
    }
    for claim, value in expected.items():
        if claims.get(claim) != value:
            fail(f"receipt claim {claim} is {claims.get(claim)!r}, expected {value!r} (the verdict's)")
    print(f"receipt verified offline: kid {kid}, decision {claims['jti']}, "
          f"args_digest {claims['args_digest'][:12]}..., expires in {claims['exp'] - now}s")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        run(args)
    except ExampleFailure as failure:
        print(f"python example: FAILED: {failure}", file=sys.stderr)
        return 1
    print("python example: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
