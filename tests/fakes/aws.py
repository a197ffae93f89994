"""moto's AWS (DynamoDB, SSM) over real HTTP on 127.0.0.1, with the faults real AWS gives put in
front of it: scripted errors (a throttled call is an HTTP 400 `ThrottlingException`; 5xx) and
slow calls. Everything else is moto's own answer.

Usage::

    with MotoServer() as aws:
        env = aws.env()                                  # AWS_ENDPOINT_URL, keys, region
        aws.fail_next(times=2, target="AmazonSSM.")      # the next two SSM calls are throttled
        aws.fail_next(match=b"answer#")                  # the next call whose body has this
        aws.slow(2.5, target="DynamoDB_")                # every DynamoDB call takes 2.5 s more
        aws.calls                                        # [(x-amz-target, status)] answered

moto updates items read-modify-write without a lock, so requests reach it one at a time, as
DynamoDB serialises writes to one item; the delay is spent before that, side by side, like
network latency.
"""

from __future__ import annotations

import io
import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass

from tests.ports import POLL_SECONDS


def create_table(endpoint: str, name: str | None = None, region: str = "eu-west-1") -> str:
    """The table serverless.yml declares: pk/sk strings, pay per request, TTL on expires_at,
    the sparse `by_day` index of answer records."""
    import boto3

    name = name or f"tc-{uuid.uuid4().hex[:8]}"
    b = boto3.client("dynamodb", endpoint_url=endpoint, region_name=region,
                     aws_access_key_id="testing", aws_secret_access_key="testing")
    b.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"}
                              for n in ("pk", "sk", "day", "created_at")],
        GlobalSecondaryIndexes=[{
            "IndexName": "by_day", "Projection": {"ProjectionType": "ALL"},
            "KeySchema": [{"AttributeName": "day", "KeyType": "HASH"},
                          {"AttributeName": "created_at", "KeyType": "RANGE"}]}],
    )
    b.update_time_to_live(TableName=name, TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "expires_at"})
    return name


@dataclass
class _Fault:
    error: str
    status: int
    target: str | None
    match: bytes | None

    def applies(self, target: str, body: bytes) -> bool:
        return (self.target is None or target.startswith(self.target)) and (
            self.match is None or self.match in body)


class MotoServer:
    def __init__(self, region: str = "eu-west-1"):
        self.region = region
        self.calls: list[tuple[str, int]] = []
        self.answering = 0  # calls received and not yet answered (a slow call outlives its client)
        self._faults: list[_Fault] = []
        self._delays: dict[str | None, float] = {}
        self._lock = threading.Lock()
        self._server = None

    # -- scripting ---------------------------------------------------------------------------
    def fail_next(self, error: str = "ThrottlingException", status: int = 400, times: int = 1,
                  target: str | None = None, match: bytes | None = None) -> None:
        """The next `times` calls (to targets starting with `target`, whose body holds `match`)
        get AWS's error `error` with `status` instead of moto's answer."""
        with self._lock:
            self._faults += [_Fault(error, status, target, match) for _ in range(times)]

    def slow(self, seconds: float, target: str | None = None) -> None:
        """Every later call to `target` (a prefix; None: every call) waits `seconds` first."""
        with self._lock:
            self._delays[target] = seconds

    def clear(self) -> None:
        """No more faults or slow calls: the service is healthy again."""
        with self._lock:
            self._faults.clear()
            self._delays.clear()

    def quiet(self) -> bool:
        """No call is being answered (a slow call its client gave up on is still counted)."""
        with self._lock:
            return self.answering == 0

    def pending(self) -> int:
        with self._lock:
            return len(self._faults)

    def env(self, **more: str) -> dict[str, str]:
        return {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_REGION": self.region, "AWS_ENDPOINT_URL": self.endpoint, **more}

    def client(self, service: str):
        import boto3

        return boto3.client(service, endpoint_url=self.endpoint, region_name=self.region,
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    # -- the server --------------------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_port}"

    def start(self) -> MotoServer:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        moto, serial = DomainDispatcherApplication(create_backend_app), threading.Lock()

        def app(environ, start_response):
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            environ["wsgi.input"] = io.BytesIO(body)
            target = environ.get("HTTP_X_AMZ_TARGET", "")
            with self._lock:
                self.answering += 1
            try:
                return answer(environ, start_response, body, target)
            finally:
                with self._lock:
                    self.answering -= 1

        def answer(environ, start_response, body: bytes, target: str):
            with self._lock:
                fault = next((f for f in self._faults if f.applies(target, body)), None)
                if fault:
                    self._faults.remove(fault)
                delay = max((s for t, s in self._delays.items()
                             if t is None or target.startswith(t)), default=0.0)
            time.sleep(delay)
            if fault:
                self.calls.append((target, fault.status))
                message = "Rate exceeded" if "Throttl" in fault.error else "Injected failure"
                out = json.dumps({"__type": f"com.amazonaws.coral.service#{fault.error}",
                                  "message": message}).encode()
                start_response(f"{fault.status} Fault", [
                    ("Content-Type", "application/x-amz-json-1.1"),
                    ("Content-Length", str(len(out)))])
                return [out]
            with serial:
                status: list[str] = []

                def record(line, headers, exc_info=None):
                    status.append(line)
                    return start_response(line, headers, exc_info)

                out = list(moto(environ, record))
            self.calls.append((target, int(status[0].split()[0]) if status else 0))
            return out

        self._server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=self._server.serve_forever, args=(POLL_SECONDS,),
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server = None

    def __enter__(self) -> MotoServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
