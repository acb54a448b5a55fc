"""Hooks of the schemathesis run (.ci/schemathesis.sh)."""
import re
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
    unknown_references_sent_as_none(case)


# A schema-valid reference the schema cannot check: a tax rate must be one of the shop's own
# (any other id is refused with 422, tested in tests/it/taxed.rs), and a VAT id must be in its
# country's form (tested there and in the domain's unit tests). Such a value the generator
# made valid is sent as null (none), which is valid too; an invalid one (the negative cases)
# is sent as generated.
VAT_ID = re.compile(r"[A-Za-z0-9 .\-\u00A0]*")


def unknown_references_sent_as_none(case):
    body = case.body
    if not isinstance(body, dict):
        return
    rate = body.get("tax_rate_id")
    if isinstance(rate, str) and len(rate) <= 100:
        body["tax_rate_id"] = None
    vat_id = body.get("vat_id")
    if isinstance(vat_id, str) and len(vat_id) <= 255 and VAT_ID.fullmatch(vat_id):
        body["vat_id"] = None
