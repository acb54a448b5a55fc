"""A real SMTP server for paydesk's tests: aiosmtpd (PyPI) on a loopback port, keeping each
message it takes as JSON in DIR/<recipient>/<n>.json (subject decoded, Message-ID, both
parts, every header). Faults are chosen by the recipient's address, each counted per address:
  ann+temp2@…  answers 451 to the first 2 messages, then takes them;
  ann+reject@… answers 550 (refused for good);
  ann+slow3@…  takes the message, then waits 3 s before answering (past a short timeout);
  ann+drop@…   takes the first message and closes the connection without answering.
Usage: smtp_server.py PORT DIR
"""

import asyncio
import email
import email.policy
import json
import os
import re
import sys
import threading

from aiosmtpd.controller import Controller

counts = {}
lock = threading.Lock()


def store(directory, rcpt, raw):
    message = email.message_from_bytes(raw, policy=email.policy.default)
    parts = {"text/plain": "", "text/html": ""}
    for part in message.walk():
        if part.get_content_type() in parts and not part.is_multipart():
            parts[part.get_content_type()] = part.get_content()
    folder = os.path.join(directory, rcpt.lower())
    os.makedirs(folder, exist_ok=True)
    with lock:
        n = len(os.listdir(folder))
        record = {
            "subject": str(message["subject"] or ""),
            "message_id": str(message["message-id"] or ""),
            "from": str(message["from"] or ""),
            "to": str(message["to"] or ""),
            "text": parts["text/plain"],
            "html": parts["text/html"],
            "headers": {k.lower(): str(v) for k, v in message.items()},
        }
        tmp = os.path.join(folder, f".{n}.tmp")
        with open(tmp, "w") as f:
            json.dump(record, f)
        os.rename(tmp, os.path.join(folder, f"{n:04}.json"))


class Handler:
    def __init__(self, directory):
        self.directory = directory

    async def handle_DATA(self, server, session, envelope):
        for rcpt in envelope.rcpt_tos:
            local = rcpt.split("@")[0]
            tag = local.split("+", 1)[1] if "+" in local else ""
            with lock:
                seen = counts.get(rcpt, 0)
                counts[rcpt] = seen + 1
            temp = re.fullmatch(r"temp(\d+)", tag)
            if temp and seen < int(temp.group(1)):
                return "451 4.3.0 Try again later"
            if tag == "reject":
                return "550 5.1.1 No such mailbox"
            store(self.directory, rcpt, envelope.original_content or envelope.content)
            slow = re.fullmatch(r"slow(\d+)", tag)
            if slow and seen == 0:
                await asyncio.sleep(int(slow.group(1)))
            if tag == "drop" and seen == 0:
                server.transport.close()
                return "421 closing"
        return "250 2.0.0 OK: queued"


def main():
    port, directory = int(sys.argv[1]), sys.argv[2]
    os.makedirs(directory, exist_ok=True)
    controller = Controller(Handler(directory), hostname="127.0.0.1", port=port)
    controller.start()
    print("ready", flush=True)
    try:
        sys.stdin.read()
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
