"""A tiny hand-written textbook as chunk payloads (functions.search.contract.Chunk), for API tests."""

from __future__ import annotations

from functions.search.contract import Chunk, chunk_id, content_hash

BASE = "/book/docs"
# (doc_path, doc_title, module, [(heading, anchor, level, content), ...])
DOCS = [
    ("01-loop.md", "The Control Loop", "Basics", [
        ("The Control Loop", "", 1,
         "A robot repeats a loop: it reads its sensors, decides, and drives its motors. "
         "The loop rate is how many times per second this happens."),
        ("Loop jitter", "loop-jitter", 2,
         "Jitter is the variation of the loop period from one tick to the next. "
         "Measure jitter by timestamping every tick with a monotonic clock and computing the "
         "standard deviation of the differences. Logging and garbage collection add jitter."),
        ("Open and closed loop", "open-and-closed-loop", 2,
         "An open loop controller sends a command and never checks the result. "
         "A closed loop controller measures the result with a sensor and corrects the error."),
    ]),
    ("02-sensors/01-encoders.md", "Wheel Encoders", "Sensors", [
        ("Wheel Encoders", "", 1,
         "A wheel encoder turns the rotation of a shaft into pulses called ticks."),
        ("Counting ticks", "counting-ticks", 2,
         "A quadrature encoder has two channels, A and B, a quarter period apart. "
         "The order of the edges tells the direction of rotation. Counting every edge of both "
         "channels gives four counts per slot."),
        ("Ticks to distance", "ticks-to-distance", 2,
         "Distance equals ticks divided by ticks per revolution, times the wheel circumference. "
         "Wheel slip makes encoder odometry drift over long distances."),
    ]),
    ("02-sensors/02-imu.md", "Inertial Measurement Units", "Sensors", [
        ("Inertial Measurement Units", "", 1,
         "An inertial measurement unit combines a gyroscope and an accelerometer."),
        ("Gyroscope drift", "gyroscope-drift", 2,
         "A gyroscope measures angular rate. Integrating the rate gives an angle, but the bias "
         "of the gyroscope makes the integrated angle drift slowly. Calibrate the bias by "
         "averaging readings while the robot stands still."),
        ("Complementary filter", "complementary-filter", 2,
         "A complementary filter fuses the gyroscope and the accelerometer: it trusts the "
         "gyroscope over short times and the accelerometer's gravity direction over long times. "
         "A typical blend factor is 0.98."),
    ]),
]


def page_url(doc_path: str) -> str:
    return f"{BASE}/{doc_path.removesuffix('.md').replace('01-', '').replace('02-', '')}"


def chunks(model: str = "fake-embedder") -> list[Chunk]:
    out = []
    for doc_path, title, module, sections in DOCS:
        page = page_url(doc_path)
        for index, (heading, anchor, level, content) in enumerate(sections):
            path = [title] if level == 1 else [title, heading]
            cid = chunk_id(doc_path, index)
            out.append(Chunk(
                chunk_id=cid, doc_path=doc_path, doc_id=doc_path.removesuffix(".md"),
                doc_title=title, module=module, heading_path=path, section_title=heading,
                section_number="", heading_level=level, anchor=anchor,
                url=f"{page}#{anchor}" if anchor else page, page_url=page, chunk_index=index,
                token_count=len(content.split()), content=content,
                content_hash=content_hash(content), content_type="text", tags=[],
                embedding_model=model, embed_text=f"{title} > {heading}\n{content}",
            ))
    return out


ALL_URLS = {c.url for c in chunks()}
