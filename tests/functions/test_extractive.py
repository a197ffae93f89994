"""The offline answerer quotes the block that answers, whole, cited with the heading it sits under.

Golden answers for the failure kinds readers saw: the answer in a table, in a code block, on a
one-line definition, in a short section merged into its neighbour, next to a quiz, and in a
paragraph that opens with a pronoun.
"""

from __future__ import annotations

from dataclasses import replace

from functions.answers.citations import link_citations
from functions.answers.extractive import compose, supported
from functions.answers.question_kind import read
from functions.answers.reader_blocks import split_blocks
from functions.answers.selection import read_seen
from functions.search.types import SearchHit

PAGE = "/book/docs/rl"


def hit(content: str, anchor: str = "top", title: str = "Top", dense: float = 0.8,
        sections: list[dict] | None = None, pid: int = 1) -> SearchHit:
    return SearchHit(pid, dense, dense, {
        "content": content, "url": f"{PAGE}#{anchor}", "anchor": anchor, "page_url": PAGE,
        "section_title": title, "doc_title": "RL", "doc_path": "rl.md",
        "sections": sections or [{"anchor": anchor, "title": title, "url": f"{PAGE}#{anchor}",
                                  "start": 0}],
    })


def shown(question: str, hits: list[SearchHit], embed=None) -> tuple[str, list[dict]]:
    composed = compose(read(question), hits, embed)
    return link_citations(composed.text, composed.sources)


def test_answer_in_a_table_is_quoted_with_its_lead_in_and_the_row_the_question_names():
    content = ("## Robots\n\nThe humanoids compared in this chapter:\n\n"
               "| Robot | Height | Mass |\n|---|---|---|\n| Optimus Gen 2 | 1.73 m | 56 kg |\n"
               "| Atlas | 1.5 m | 89 kg |")
    text, cites = shown("How tall and heavy is Optimus Gen 2?", [hit(content)])
    assert text == ("The humanoids compared in this chapter [1]:\n\n"
                    "| Robot | Height | Mass |\n|---|---|---|\n| Optimus Gen 2 | 1.73 m | 56 kg |")
    assert [c["url"] for c in cites] == [f"{PAGE}#top"]
    # a question naming no row, or several (its names are examples), gets the whole table
    whole = ("| Robot | Height | Mass |\n|---|---|---|\n| Optimus Gen 2 | 1.73 m | 56 kg |\n"
             "| Atlas | 1.5 m | 89 kg |")
    assert shown("How tall and heavy are the compared humanoids?", [hit(content)])[0].endswith(whole)
    assert shown("Which robots, such as Atlas and Optimus Gen 2, are compared by height?",
                 [hit(content)])[0].endswith(whole)


def test_answer_in_a_code_block_keeps_the_fence():
    content = ("Spawn the robot with this launch file.\n\n```python\n"
               "Node(package='gazebo_ros', executable='spawn_entity.py')\n```")
    text, _ = shown("How do I spawn the robot in Gazebo with spawn_entity?", [hit(content)])
    assert text == ("Spawn the robot with this launch file [1].\n\n```python\n"
                    "Node(package='gazebo_ros', executable='spawn_entity.py')\n```")


def test_a_one_line_definition_is_answer_material():
    content = ("V(s) is the value of a state.\n\n"
               "- V(s): Value of state s\n- γ: Discount factor\n- R: Reward")
    text, cites = shown("What does γ mean?", [hit(content, "bellman-equation", "Bellman Equation")])
    assert "γ: Discount factor" in text
    assert cites[0]["section_title"] == "Bellman Equation"


def test_merged_short_section_is_cited_with_its_own_heading():
    content = ("### Policies\n\nA policy maps states to actions.\n\n"
               "### Bellman Equation\n\nThe Bellman equation writes a value as reward plus the "
               "discounted value of the next state.")
    start = content.index("### Bellman")
    sections = [
        {"anchor": "policies", "title": "Policies", "url": f"{PAGE}#policies", "start": 0},
        {"anchor": "bellman-equation", "title": "Bellman Equation",
         "url": f"{PAGE}#bellman-equation", "start": start},
    ]
    text, cites = shown("What does the Bellman equation say about a value?",
                        [hit(content, "policies", "Policies", sections=sections)])
    assert "reward plus the discounted value" in text
    assert [c["url"] for c in cites] == [f"{PAGE}#bellman-equation"]
    assert cites[0]["section_title"] == "Bellman Equation"


def test_answer_in_a_component_prop_is_quoted_as_the_page_shows_it():
    content = ("## Hardware for AI\n\n<HardwareSpecs\n  name=\"AI Acceleration Hardware\"\n"
               "  specs={{\n    processor: \"Jetson AGX Orin (64GB)\",\n"
               "    compute: \"275 TOPS (INT8)\"\n  }}\n/>\n\n<Quiz\n  question=\"How much "
               "INT8 compute does the Orin have?\"\n  options={[\"275 TOPS\", \"40 TOPS\"]}\n/>")
    text, cites = shown("How much INT8 compute does the Jetson AGX Orin offer?",
                        [hit(content, "hardware-for-ai", "Hardware for AI")])
    assert text == ("From “Hardware for AI” [1]:\n\n**AI Acceleration Hardware**:\n"
                    "- **Processor**: Jetson AGX Orin (64GB)\n- **Compute**: 275 TOPS (INT8)")
    assert [c["url"] for c in cites] == [f"{PAGE}#hardware-for-ai"]


def test_quiz_prompts_options_and_navigation_are_never_quoted():
    content = ("The durability QoS policy decides whether late subscribers get old messages.\n\n"
               "**Question 1:** What does the durability QoS policy determine?\n\n"
               "- A) Topics\n- B) Services\n- C) Durability of old messages\n\n"
               "**Next:** Durability in practice →")
    text, _ = shown("What does the durability QoS policy determine?", [hit(content)])
    assert text == ("The durability QoS policy decides whether late subscribers get old "
                    "messages [1].")


def test_a_quiz_section_is_skipped_unless_asked_for():
    quiz = hit("What does the durability policy determine? Durability decides late messages.",
               "quiz", "Quiz", pid=2)
    lesson = hit("Durability decides whether a late subscriber receives old messages.",
                 "durability", "Durability", dense=0.7)
    _, cites = shown("What does durability decide?", [quiz, lesson])
    assert [c["section_title"] for c in cites] == ["Durability"]


def test_a_pronoun_led_paragraph_brings_the_one_before():
    content = ("Integral windup happens when the integral term keeps growing while the motor "
               "is saturated.\n\nThis makes the controller overshoot badly once the error "
               "changes sign, so clamp the integral term.")
    text, _ = shown("Why does the controller overshoot after saturation, and what should I clamp?",
                    [hit(content)])
    assert text.startswith("Integral windup happens")
    assert text.endswith("clamp the integral term [1].")


def test_a_long_code_block_shows_the_lines_the_question_asks_about():
    filler = "\n".join(f"  joint_{k}: {{kp: 1.0}}" for k in range(60))
    content = ("The controllers are configured in YAML.\n\n```yaml\ncontrollers:\n" + filler +
               "\nbalance_controller:\n  com_height: 0.8  # m\n  rate: 500\n```")
    question = "What reference CoM height does the balance controller use?"
    text, _ = shown(question, [hit(content)])
    assert "com_height: 0.8" in text and "joint_0:" not in text
    assert text.count("…") == 1 and text.rstrip().endswith("```")
    from functions.answers.question_kind import quantity_words

    assert supported(compose(read(question), [hit(content)]), quantity_words(question))


def test_a_lead_in_with_nothing_after_it_is_never_quoted_alone():
    content = "Options for the physical robot, depending on budget:\n\n### Premium\n\nUnitree G1."
    composed = compose(read("What are the options for the physical robot on a budget?"), [hit(content)])
    assert "depending on budget" not in composed.text


def test_what_is_x_prefers_the_block_that_defines_x():
    from functions.answers.question_kind import defined_term
    from functions.search.sparse import terms

    aside = hit("Filters here assume a constant dt. If your loop jitters badly, pass the real "
                "elapsed time into the filter.", "median-filter", "Median filter", dense=0.56)
    terms_table = hit("Two numbers describe a loop's timing:\n\n| Term | Meaning |\n|---|---|\n"
                      "| Loop rate | Ticks per second |\n| Jitter | How much the period varies "
                      "from tick to tick |\n| Latency | Sensor to actuator time |",
                      "loop-timing", "Loop timing", dense=0.5, pid=2)
    text, cites = shown("What is loop jitter?", [aside, terms_table])
    assert cites[0]["section_title"] == "Loop timing"
    assert "| Jitter | How much the period varies from tick to tick |" in text
    assert "Loop rate" not in text  # the table is cut to the row that answers
    assert defined_term("What is the difference between topics and services?") is None
    assert defined_term("What does DVFS stand for?") == terms("DVFS")[0]


def test_a_long_paragraph_is_cut_to_whole_sentences():
    filler = " ".join(f"Sentence {i} talks about something unrelated to motors." for i in range(20))
    content = filler + " Stepper motors hold position without feedback. " + filler
    text, _ = shown("Do stepper motors need feedback to hold position?", [hit(content)])
    assert "Stepper motors hold position without feedback" in text
    assert len(text) < 400 and text.endswith("[1].")
    assert text[0].isupper()


def test_far_weaker_hits_are_not_quoted():
    strong = hit("Encoders count ticks on a wheel to measure rotation.", "encoders", "Encoders",
                 dense=0.8)
    weak = hit("Encoders appear in the glossary too.", "glossary", "Glossary", dense=0.3, pid=2)
    _, cites = shown("How do encoders measure rotation?", [strong, weak])
    assert [c["section_title"] for c in cites] == ["Encoders"]


def test_a_close_second_block_from_another_section_joins():
    services = hit("A service call always makes the calling node wait.", "services", "Services")
    actions = hit("An action call never makes the calling node wait.", "actions", "Actions", pid=2)
    text, cites = shown("Does a service call or an action call make the calling node wait?",
                        [services, actions])
    assert {c["section_title"] for c in cites} == {"Services", "Actions"}
    assert text.count("[") == 2


def test_no_second_section_when_the_best_block_holds_every_word_asked():
    bridge = hit("Drivers insert a dead time between switching the two sides.", "h-bridge",
                 "The H-bridge")
    reckoning = hit("Dead reckoning drifts further and further over time.", "dead-reckoning",
                    "Dead reckoning", pid=2)
    _, cites = shown("dead time", [bridge, reckoning])
    assert [c["section_title"] for c in cites] == ["The H-bridge"]


def test_a_second_section_joins_for_what_the_first_leaves_out():
    reliability = hit("The reliability policy decides whether lost messages are sent again: "
                      "reliable retransmits them, best effort drops them.",
                      "reliability", "Reliability", dense=0.8)
    durability = hit("The durability policy decides whether a subscriber that joins late gets "
                     "the messages published before it joined.", "durability", "Durability",
                     dense=0.6, pid=2)
    history = hit("The reliability of a message also depends on the network, and lost "
                  "messages are sent again only by reliable publishers.", "network", "Network",
                  dense=0.7, pid=3)
    question = "How do the reliability and the durability policies differ?"
    text, cites = shown(question, [reliability, history, durability])
    assert [c["section_title"] for c in cites] == ["Reliability", "Durability"]


def test_the_section_s_block_with_what_its_opener_leaves_out_joins():
    content = ("Detailed environment assets for a simulated robot need care with realism and "
               "physical accuracy, and must balance fidelity with performance.\n\n"
               "Lighting should match the lab the robot will work in.\n\n"
               "Level-of-detail meshes, occlusion culling and texture streaming keep a "
               "detailed environment running in real time.")
    question = "How do I keep a detailed environment running in real time?"
    text, cites = shown(question, [hit(content, "assets", "Environment assets")])
    assert "occlusion culling" in text and "Lighting" not in text
    assert [c["section_title"] for c in cites] == ["Environment assets"]
    # a block that leans on the other ("this balance …") comes after it, as in the book
    leaning = ("Message size is a balance:\n\n- large messages cost bandwidth\n"
               "- small messages cost overhead\n\n"
               "For a humanoid, this balance between large messages and small frequent ones "
               "matters most for sensor data.")
    text, _ = shown("What is the trade-off between large messages and small frequent ones?",
                    [hit(leaning, "size", "Message size")])
    assert text.index("large messages cost") < text.index("this balance")


def test_a_heading_s_overview_comes_with_the_subsection_that_holds_the_details():
    def section(content, anchor, path, dense, pid):
        h = hit(content, anchor, path[-1], dense=dense, pid=pid)
        h.payload["heading_path"] = path
        return h

    loop = section("In code the loop is plain: read, compute, write, wait for the next tick. "
                   "The maths assumes the loop runs at a fixed period.", "the-control-loop",
                   ["Intro", "The control loop"], 0.6, 1)
    jitter = section("To check it, record a timestamp at the top of each tick with a monotonic "
                     "clock and look at the spread of the differences.", "measuring-loop-jitter",
                     ["Intro", "The control loop", "Measuring loop jitter"], 0.55, 2)
    other = section("To check it, record the motor current at the top of each tick with a "
                    "monotonic clock.", "motor-current", ["Intro", "Motors"], 0.55, 3)
    question = "How can I check whether my control loop really runs at a steady period?"
    _, cites = shown(question, [loop, jitter])
    assert [c["section_title"] for c in cites] == ["The control loop", "Measuring loop jitter"]
    # a section that is not under the best one's heading does not join for that reason
    _, cites = shown(question, [loop, other])
    assert [c["section_title"] for c in cites] == ["The control loop"]


def test_a_comparison_quotes_the_section_of_each_side():
    collision = hit("Collision geometry should be simpler than the visual geometry: boxes and "
                    "cylinders keep contact checks fast.", "collision", "Collision Properties",
                    dense=0.8)
    visual = hit("The visual geometry of a link can be a detailed mesh: it is only drawn.",
                 "visual", "Visual Properties", dense=0.7, pid=2)
    inertia = hit("The inertia of a link sets how it accelerates.", "inertia", "Inertial",
                  dense=0.72, pid=3)
    question = "How should the visual geometry of a link differ from its collision geometry?"
    _, cites = shown(question, [collision, inertia, visual])
    assert [c["section_title"] for c in cites] == ["Collision Properties", "Visual Properties"]
    # the same blocks for a question that compares nothing: one section
    _, alone = shown("How simple should collision geometry be?", [collision, inertia, visual])
    assert [c["section_title"] for c in alone] == ["Collision Properties"]


def test_quantity_question_needs_a_number_of_that_unit():
    content = "The battery warns at 10 percent and shuts down the arms at 5 percent."
    composed = compose(read("How many hours can it run on one charge?"), [hit(content)])
    from functions.answers.question_kind import quantity_words

    assert not supported(composed, quantity_words("How many hours can it run on one charge?"))
    assert supported(composed, quantity_words("What battery percentage triggers a warning?"))
    words = compose(read("How many modules does the course have?"),
                    [hit("The course is divided into seven modules.")])
    assert supported(words, quantity_words("How many modules does the course have?"))


def test_a_citation_marker_or_a_possessive_is_not_a_quantity():
    from functions.answers.question_kind import quantity_words, states_quantity

    # "[1]" is the answer's own marker, not a number of anything
    tall = quantity_words("How tall is the robot?")
    composed = compose(read("How tall is the robot?"), [hit("The robot is tall for its class.")])
    assert composed.text.endswith("[1].") and not supported(composed, tall)
    assert supported(compose(read("How tall is the robot?"), [hit("The robot is 1.5 m tall.")]), tall)
    # the "s" of "robot's" is not seconds; "5 s" and "5s" are
    steps = quantity_words("How long is the horizon, in steps or seconds?")
    assert not states_quantity("The robot's horizon covers 3 gait phases.", steps)
    assert states_quantity("The horizon is 5 s long.", steps)
    assert states_quantity("A horizon of 20 steps.", steps)
    # a number in words states it too, from two to the tens
    assert states_quantity("The horizon spans twenty steps.", steps)
    assert states_quantity("It looks fifteen steps ahead.", steps)
    assert not states_quantity("The canteen horizon has steps.", steps)


def test_a_hard_wrapped_sentence_states_its_number():
    from functions.answers.question_kind import quantity_words, states_quantity

    # the count noun and the number sit on two source lines and two clauses of one sentence
    text = ("Breakpoints use hardware comparators in the core; a Cortex-M3 or\n"
            "M4 has 6 and a Cortex-M0+ has 4.")
    assert states_quantity(text, quantity_words("How many hardware breakpoints can I set?"))
    # a table row and a list item stay statements of their own
    assert not states_quantity("| Breakpoints | many |\n| Watchpoints | 4 |",
                               quantity_words("How many breakpoints are there?"))


def test_how_long_far_or_fast_needs_a_number_of_that_dimension():
    from functions.answers.question_kind import quantity_words, states_quantity

    cable = quantity_words("How long can my CAN cable be at 1 Mbit/s?")
    # a rate is not a length or a duration
    assert not states_quantity("At 1 Mbit/s that is about 8,000 frames per second.", cable)
    assert states_quantity("At 1 Mbit/s the bus may be 40 m long.", cable)
    assert states_quantity("Training takes 3 days.", quantity_words("How long does it take?"))
    fast = quantity_words("How fast can the bus run?")
    assert states_quantity("CAN runs at up to 1 Mbit/s.", fast)
    assert not states_quantity("The bus has 2 wires.", fast)
    # "how far" inside the question asks no distance: any number will do, as before
    assert quantity_words("How does the filter decide how far to move its estimate?") == set()


def test_a_quantity_question_prefers_the_block_that_states_it():
    from functions.answers.question_kind import quantity_words

    content = ("The battery thresholds decide when the robot saves power.\n\n"
               "The power manager lowers the clock when the battery gets low, so the robot "
               "keeps walking longer on the battery.\n\n"
               "- critical: 10 percent\n- low: 20 percent")
    question = "At what battery percentage does the power manager go low?"
    quantity = quantity_words(question)
    plain_pick = compose(replace(read(question), quantity=None), [hit(content)])
    picked = compose(read(question), [hit(content)])
    assert "20 percent" in picked.text and supported(picked, quantity)
    assert "20 percent" not in plain_pick.text  # without the rule the prose wins


def test_blocks_keep_lists_tables_and_components_apart():
    kinds = [(b.kind, b.noise) for b in split_blocks(
        "Intro:\n- a\n\n- b\n\n| x |\n|---|\n\n<Quiz\n  q=\"x\"\n/>\n\nNext: Motors →")]
    assert kinds == [("paragraph", False), ("list", False), ("table", False), ("jsx", True),
                     ("definition", True)]


def test_a_list_of_exercise_titles_is_not_answer_material():
    blocks = split_blocks("Beamforming focuses on the speaker.\n\n"
                          "- Example: Using beamforming to focus on the speaker\n"
                          "- Exercise 2: Filter out fan noise\n\n"
                          "- Example of use: a phone\n- a laptop")
    assert [b.noise for b in blocks] == [False, True, False]


def test_diagram_source_and_figure_captions_are_not_answer_material():
    content = ("The depth pipeline turns two images into a point cloud.\n\n"
               "```mermaid\ngraph LR\n  ST[Stereo Cameras] --> DEPTH[Depth Map]\n```\n\n"
               "*Figure: Stereo cameras feeding the depth map*\n\n"
               "```python\ndepth = stereo.compute(left, right)\n```")
    kinds = [(b.kind, b.noise) for b in split_blocks(content)]
    assert kinds == [("paragraph", False), ("code", True), ("definition", True),
                     ("code", False)]
    text, _ = shown("How do stereo cameras produce a depth map?", [hit(content)])
    assert "graph LR" not in text and "Figure:" not in text
    # asked for, the diagram may be quoted
    asked, _ = shown("What does the diagram of the stereo cameras and depth map show?",
                     [hit("```mermaid\ngraph LR\n  ST[Stereo Cameras] --> DEPTH[Depth Map]\n```")])
    assert "graph LR" in asked


def test_a_paragraph_summing_up_a_list_brings_the_list_and_its_intro():
    content = ("Nodes are the units of a ROS 2 system.\n\n"
               "In a humanoid, nodes are grouped by function:\n\n"
               "- **Drivers**: read the IMU and the encoders\n- **Planners**: make trajectories\n\n"
               "This separation by function lets each group be developed and tested alone.")
    text, _ = shown("Why can each group be developed and tested alone?",
                    [hit(content)])
    assert text == ("In a humanoid, nodes are grouped by function:\n\n"
                    "- **Drivers**: read the IMU and the encoders\n- **Planners**: make trajectories"
                    "\n\nThis separation by function lets each group be developed and tested "
                    "alone [1].")


def test_code_comes_with_the_sentence_that_says_what_it_gives():
    content = ("The distance is half the echo time times the speed of sound:\n\n"
               "```python\ndistance = 343.0 * echo_s / 2\n```\n\n"
               "An echo of 5.8 ms therefore means an obstacle about 1 m away.\n\n"
               "Ultrasonic sensors struggle with soft surfaces such as curtains, which absorb "
               "the burst instead of reflecting it back to the sensor.")
    text, _ = shown("How far away is an obstacle whose echo takes 5.8 ms, and what speed of "
                    "sound does the distance formula use?", [hit(content)])
    assert text.endswith("```\n\nAn echo of 5.8 ms therefore means an obstacle about 1 m "
                         "away [1].")
    assert "curtains" not in text
    # a sentence left open for the code below it is never quoted without the code
    open_end = "The relation with the loop period is\n\n```python\nalpha = tau / (tau + dt)\n```"
    text, _ = shown("complementary filter time constant tau loop period", [hit(open_end)])
    assert "alpha = tau / (tau + dt)" in text


def test_an_indented_code_block_is_code_not_a_paragraph():
    blocks = split_blocks("Walk like this:\n\n    def walk(self):\n        step = 0.1\n")
    assert [b.kind for b in blocks] == ["paragraph", "code"]


def test_a_block_is_read_under_the_headings_above_its_own():
    def section(title: str, parent: str, content: str, pid: int) -> SearchHit:
        h = hit(content, f"unity-implementation-{pid}", title, pid=pid)
        h.payload["heading_path"] = ["Sensor simulation", parent, title]
        return h

    camera = section("Unity Implementation", "Camera Simulation",
                     "Attach the capture script to the sensor object in the scene.", 1)
    lidar = section("Unity Implementation", "LiDAR Simulation",
                    "Attach the raycast script to the sensor object in the scene.", 2)
    _, cites = shown("How is the lidar done in Unity?", [camera, lidar])
    assert [c["url"] for c in cites] == [f"{PAGE}#unity-implementation-2"]


def test_a_selection_is_read_in_sentences_and_lines_of_code():
    out = read_seen("Jitter is the variation of the loop period. Measure it with a clock.\n\n"
                    "```python\nx = 1\n```")
    assert [(p.kind, p.text) for p in out] == [
        ("sentence", "Jitter is the variation of the loop period."),
        ("sentence", "Measure it with a clock."), ("code", "x = 1")]


def test_a_quote_never_ends_on_what_it_announces():
    # "… as follows:" is quoted with what it announces, or not at all (issue 25, item 3)
    content = ("Calibrating the gyroscope takes three steps, as follows:\n\n"
               "1. Put the robot on a level floor.\n2. Average 500 readings.\n"
               "3. Subtract the average from every later reading.\n\n"
               "## Next\n\nThe accelerometer is calibrated in the next chapter.")
    text, _ = shown("What are the steps to calibrate the gyroscope?", [hit(content)])
    assert "3. Subtract the average" in text
    assert not text.rstrip().endswith(":")
    lone = hit("Calibrating the gyroscope takes three steps, as follows:\n\n## Next\n\n"
               "Put the robot on a level floor and average its readings to find the bias.",
               "calibration", "Calibration")
    text, _ = shown("How do I calibrate the gyroscope bias?", [lone])
    assert text and not text.rstrip().endswith(":") and "as follows" not in text


# A reader's report (issue 37): "…looks as follows. Each box is a server/VM [1]." was quoted
# without the diagram that held the ports.
CLUSTER = ("The cluster looks as follows. Each box is a server/VM.\n\n"
           "```mermaid\ngraph LR\n    LB[Load balancer] -->|HTTP :80| WEB[Web server]\n"
           "    WEB -- SQL :5432 --> DB[(Orders database)]\n```\n\n"
           "Orders are written by the web server only.")


def test_a_sentence_pointing_at_a_diagram_brings_the_text_it_shows():
    text, _ = shown("Which ports does the cluster use?", [hit(CLUSTER, "cluster", "Cluster")])
    assert text == ("The cluster looks as follows. Each box is a server/VM [1].\n\n"
                    "- Load balancer → Web server: HTTP :80\n"
                    "- Web server → Orders database: SQL :5432")
    # a picture cannot be read: the sentence pointing at it is not quoted at all
    pictured = CLUSTER.replace(CLUSTER[CLUSTER.index("```"):CLUSTER.rindex("```") + 3],
                               "![The cluster](cluster.png)")
    text, _ = shown("What does the cluster look like?", [hit(pictured, "cluster", "Cluster")])
    assert "as follows" not in text and "Orders are written" in text
    # … nor a diagram whose source this reader does not know
    other = CLUSTER.replace("```mermaid", "```plantuml")
    assert "as follows" not in shown("What does the cluster look like?", [hit(other)])[0]


def test_a_sentence_ending_as_follows_brings_what_follows_it():
    content = ("The bias is removed as follows.\n\n1. Put the robot on a level floor.\n"
               "2. Average 500 readings.\n3. Subtract the average from every reading.")
    text, _ = shown("How is the gyroscope bias removed?", [hit(content)])
    assert text.startswith("The bias is removed as follows [1].\n\n1. Put the robot")
    assert text.endswith("3. Subtract the average from every reading.")
    # a long paragraph is cut to three sentences, never ending on one that announces the rest
    long = ("Noise hides in every reading. The filter works as follows. It predicts the state. "
            "It weighs the prediction against the reading. The weight is the Kalman gain. "
            "The gain shrinks as the estimate settles. Tuning it is an art.")
    text, _ = shown("How does the filter work?", [hit(long)])
    assert "works as follows." not in text.split("[1]")[0][-30:] or "It predicts" in text
    assert "The filter works as follows. It predicts the state." in text


def test_a_list_item_ending_in_a_colon_brings_the_code_indented_under_it():
    # as a deployment page of a development book writes its steps (pai-hassaan deployment.md)
    steps = ("To roll back:\n\n1. Find the last good commit:\n   ```bash\n   git log --oneline\n"
             "   ```\n2. Revert to it:\n   ```bash\n   git revert <commit>\n   ```\n"
             "3. The site redeploys by itself.")
    assert [b.kind for b in split_blocks(steps)] == ["paragraph", "list"]
    text, _ = shown("How do I roll back a deployment?", [hit(steps)])
    assert text.endswith("1. Find the last good commit:\n   ```bash\n   git log --oneline\n   ```\n"
                         "2. Revert to it:\n   ```bash\n   git revert <commit>\n   ```\n"
                         "3. The site redeploys by itself.")


def test_a_heading_is_never_glued_to_the_first_sentence():
    setext = "Wiring the motor\n----------------\nConnect the red lead to the driver's A+ pin."
    assert [b.kind for b in split_blocks(setext)] == ["heading", "paragraph"]
    bold = "**Wiring the motor**\nConnect the red lead to the driver's A+ pin."
    assert [b.kind for b in split_blocks(bold)] == ["heading", "paragraph"]
    for content in (setext, bold):
        text, _ = shown("Which pin does the red lead go to?", [hit(content)])
        assert text == "Connect the red lead to the driver's A+ pin [1]."
    # a bold label ending in ':' stays the lead-in of its list; a rule draws a line, says nothing
    assert [b.kind for b in split_blocks("**Pins**:\n- A+\n- A-\n\n---\n\nDone.")] == [
        "paragraph", "list", "paragraph"]
    # a label above a paragraph that leans on it keeps its own line
    label = "Wiring\n\nThis needs the driver powered off."
    text, _ = shown("Should the driver be powered off for wiring?", [hit(label)])
    assert text == "Wiring\n\nThis needs the driver powered off [1]."


def test_every_diagram_of_the_development_books_reads_as_the_text_it_shows():
    """Real Mermaid diagrams (../shared corpora): each reads as one line per arrow, holding
    every label its source gives a node."""
    import re

    import pytest

    from functions.answers.reader_blocks import diagram_text, is_diagram
    from tests.shared import shared_dir

    books = [shared_dir() / "corpora" / name / "docs" for name in ("pai-ali", "pai-hassaan")]
    if not all(b.is_dir() for b in books):
        pytest.skip("the development books (../shared/corpora) are not here")
    diagrams = [b.text for book in books for path in sorted(book.rglob("*.md*"))
                for b in split_blocks(path.read_text(encoding="utf-8"))
                if b.kind == "code" and is_diagram(b.text) and "mermaid" in b.text.split("\n")[0]]
    assert len(diagrams) >= 50
    for source in diagrams:
        drawn = diagram_text(source)
        arrows = sum(len(re.findall(r"-->|<-->|-\.->|==>", ln)) for ln in source.split("\n"))
        assert drawn.count("\n- ") + 1 >= arrows, source
        for label in re.findall(r"\w\[([^\]\[()]+)\]", source):
            assert label.strip() in drawn, (label, source)


def test_a_long_list_is_cut_between_whole_items_and_says_more_follows():
    nested = "\n".join(f"{i}. **Issue {i}**\n   - check a\n   - check b\n   - check c"
                       for i in range(1, 5))  # 16 bullets: 4 items of 1 + 3
    text, _ = shown("What should I check?", [hit(f"Common issues:\n\n{nested}")])
    assert "**Issue 3**" in text and "**Issue 4**" not in text and text.rstrip().endswith("…")
    assert "3. **Issue 3**\n   - check a\n   - check b\n   - check c" in text  # item 3 whole
    flat = "\n".join(f"- point {i}" for i in range(20))
    text, _ = shown("What are the points?", [hit(f"Points:\n\n{flat}")])
    assert "- point 11" in text and "- point 12" not in text and text.rstrip().endswith("…")


def test_a_table_without_outer_pipes_is_quoted_as_a_table():
    text, _ = shown("What jitter does each option have?",
                    [hit("Option | Jitter\n--- | ---\nfast | 1 ms\nslow | 5 ms")])
    # the citation goes above the table, never into its last cell
    assert text.endswith("Option | Jitter\n--- | ---\nfast | 1 ms\nslow | 5 ms")
    assert split_blocks("a | b\n:--|--:\n1 | 2")[0].kind == "table"
    assert split_blocks("Either this | or that.\nNo table here.")[0].kind == "paragraph"


def test_what_is_x_quotes_the_block_that_says_what_x_is():
    from functions.answers.extractive import _defines

    assert _defines("Jitter is the variation of the loop period.", "jitter")
    assert _defines("| Jitter | How much the period varies |", "jitter")
    assert not _defines("Jitter is easy to overlook and easy to measure.", "jitter")
    table = ("| Term | Meaning |\n|---|---|\n| Period | Time between two ticks |\n"
             "| Jitter | How much the period varies from tick to tick |")
    measuring = ("Jitter is easy to overlook and easy to measure: record a timestamp at each loop "
                 "jitter tick and look at the spread of the loop jitter.")
    text, _ = shown("What is loop jitter?", [hit(measuring, "measuring", "Measuring loop jitter",
                                                 dense=0.8),
                                             hit(table, "timing", "Loop timing", dense=0.7, pid=2)])
    assert text.startswith("From “Loop timing” [1]:") and "| Jitter | How much" in text


def test_what_is_x_quotes_where_the_book_names_x_by_called_or_bold():
    # the defining paragraph names the term with "called" (the stemmer reads "alias" as
    # "alia" and "aliasing" as "alias"): it is quoted before a later one that merely uses it
    content = ("No amount of filtering after sampling can remove an alias, because once folded "
               "it is indistinguishable from a real signal.\n\nEnergy above the Nyquist "
               "frequency folds back and shows up as a false, lower frequency called an alias.")
    text, _ = shown("What is aliasing?", [hit(content, "aliasing", "Aliasing")])
    assert text.startswith("Energy above the Nyquist frequency folds back")
    content = ("Integrated driver chips insert a short dead time to prevent shoot-through.\n\n"
               "Never close both switches on one side. That shorts the supply, a fault called "
               "**shoot-through**, which destroys the switches.")
    text, _ = shown("What is shoot-through?", [hit(content, "h-bridge", "The H-bridge")])
    assert text.startswith("Never close both switches")


def test_only_a_question_asking_what_x_is_is_a_definition():
    from functions.answers.question_kind import defined_term, named_subject

    assert defined_term("What is loop jitter?") == "jitter"
    assert defined_term("What does DVFS stand for?") == defined_term("What is DVFS?")
    assert defined_term("What does ZMP mean in walking?") == "zmp"
    # names what it asks about (a follow-up's topic), but asks what it does, not what it is
    question = "What does a managed node do while it is configured but not yet active?"
    assert defined_term(question) is None and named_subject(question) is not None
    assert defined_term("What does an H-bridge do?") is None
    assert named_subject("What does an H-bridge do?") == named_subject("What is an H-bridge?")
