"""Hooks of the schemathesis run (.ci/schemathesis.sh)."""
import uuid

import schemathesis


@schemathesis.hook
def before_call(ctx, case, kwargs):
    # Each API POST gets its own Idempotency-Key, as a careful client sends. The generated
    # keys repeat ("0", "00"), and a key reused with another body is refused (422) by
    # design, which the fuzzer would read as a valid request refused. The key's own rules
    # (length, reuse, replay) are tested in tests/it/idempotency.rs.
    if case.method == "POST" and not case.path.endswith("/pay"):
        case.headers = {**(case.headers or {}), "Idempotency-Key": str(uuid.uuid4())}
