#!/usr/bin/env python3
"""Differential test: the same data and the same queries in Boardwalk and in ClickHouse (embedded, chdb).

Generates sessions (`boardwalk generate`), ingests them into a store, exports them with
`boardwalk export --format clickhouse`, loads the rows into a chdb MergeTree table created from
`boardwalk export --format clickhouse --schema` (the DDL of docs/clickhouse.md), then runs every query through
`boardwalk query --format json` and through `boardwalk query --sql clickhouse` in chdb, and requires equal
results: the same columns, the same rows (matched after sorting, or in order when the query orders them), and
numbers within 1e-9 relative. Any mismatch prints the query, both results and the SQL, and exits 1.

The script makes its own virtual environment with chdb (`--venv`, default .build/clickhouse-venv; about
900 MB, a minute to install the first time) and re-runs itself inside it.

    python3 scripts/clickhouse_diff.py                      # debug build of boardwalk, 400 sessions
    python3 scripts/clickhouse_diff.py --sessions 2000 --generated 200 --seed 7
"""
import argparse
import csv
import io
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ensure_venv(venv):
    """Re-executes this script with a Python that has chdb, making the virtual environment when needed."""
    try:
        import chdb  # noqa: F401
        return
    except ImportError:
        pass
    python = os.path.join(venv, "bin", "python")
    if os.environ.get("BOARDWALK_CHDIFF_IN_VENV"):
        sys.exit(f"clickhouse_diff: chdb is still missing in {venv}")
    if not os.path.exists(python):
        print(f"clickhouse_diff: creating {venv} and installing chdb (once)", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "venv", venv])
    check = subprocess.run([python, "-c", "import chdb"], capture_output=True)
    if check.returncode != 0:
        subprocess.check_call([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "chdb"])
    env = dict(os.environ, BOARDWALK_CHDIFF_IN_VENV="1")
    os.execve(python, [python] + sys.argv, env)


# The hand-written queries: every family, including the semantics' corner cases (absent values, answers,
# sets, dwell and censoring, every funnel mode, table stages).
FIXED = [
    # filters and counts
    'events | count',
    'events | count by kind',
    'events | where kind == "analytics" | count by name',
    'events | count by onboarding, screen',
    'events | where reply != "no" | count',
    'events | where not (reply == "no") | count',
    'events | where element == "experience" | count by value',
    'events | where element_type == "multi_select" | count by value',
    'events | count by label',
    'events | where value == "music" or value in ["pro", "beginner"] | count by element',
    'events | where value > 30 | count by element',
    'events | where kind not in ["analytics", "state_updated"] | count by kind, action',
    'events | where time >= @2026-11-01T00:30:00Z and time < @2026-11-01T02:00:00Z | count by kind',
    'events | where screen >= 2 and screen <= 4 and total_screens > 8 | count by screen',
    'events | where session == profile | count',
    'events | count by placement, variation',
    'events | where profile != "x" | count',
    'sessions | count',
    'sessions | count by exit',
    'sessions | count by onboarding, completed',
    'sessions | where did(open_paywall) and not did("navigation_failed") | count by exit',
    'sessions | where reached(3) | count by furthest_screen',
    'sessions | where started >= @2026-11-01T01:00:00Z | count by last_screen',
    'sessions | where answer("experience") == "pro" | count by variation',
    'sessions | count by answer("interests")',
    'sessions | where answer("interests") == "music" | count',
    'sessions | where duration > 2m | count by paywall, closed',
    'sessions | where events >= 20 and email_collected | count',
    # stats
    'events | stats count(), count(reply), count_distinct(session), count_distinct(value), count_distinct(label)',
    'events | where element_type == "input" | stats sum(value), avg(value), min(value), max(value), p50(value), percentile(value, 0.3)',
    'events | stats min(value), max(value), min(label), max(label) by element',
    'events | stats min(time), max(time), min(name), max(name), min(seq), max(seq) by kind',
    'events | where name == "screen_presented" | stats count(), p50(dwell), p90(dwell), p99(dwell), avg(dwell), max(dwell) by screen',
    'events | stats sum(dwell), count(dwell)',
    'events | where kind == "close" | stats count(), count_distinct(action), avg(screen)',
    'sessions | stats count(), rate(completed), p50(duration), p90(duration), p95(duration), percentile(duration, 0.42) by onboarding',
    'sessions | stats avg(events), sum(events), min(started), max(ended), rate(exit == "closed") by variation',
    'sessions | stats count_distinct(profile), count_distinct(answer("interests")), max(furthest_screen), min(total_screens)',
    'sessions | where onboarding == "nope" | stats count(), sum(events), avg(duration), p50(duration), rate(completed)',
    'sessions | where onboarding == "nope" | stats count() by exit',
    'sessions | stats avg(answer("age")), p50(answer("age")), min(answer("experience")), max(answer("interests"))',
    'sessions | stats count(), rate(did(close)) by answer("experience"), completed',
    'sessions | stats count(), rate(completed), ci(completed) by variation',
    'sessions | stats ci(paywall, 0.8) as pw, ci(completed, 0.999) by onboarding',
    'sessions | where onboarding == "nope" | stats ci(completed)',
    'events | stats ci(kind == "close", 0.9) as closing by screen | sort closing_low desc',
    # versus: rates and funnel steps against a baseline group
    'sessions | stats count(), rate(completed), rate(paywall) as pw by answer("level") | versus "beginner"',
    'sessions | stats rate(did(close)), ci(completed) by exit | versus "abandoned"',
    'sessions | stats rate(completed) by paywall | versus false',
    'events | where kind == "analytics" | stats rate(screen >= 2) as deep by name | versus "screen_presented"',
    'sessions | count by variation, exit | stats rate(count > 5) as many by exit | versus "abandoned"',
    'sessions | funnel onboarding_started, screen_completed(screen == 2), onboarding_completed by answer("level") | versus "pro"',
    'sessions | funnel by exit | versus "completed"',
    'sessions | funnel by session.answer("level") | versus "amateur" | where p_value < 0.5 | sort p_value | limit 5',
    'events | where kind == "analytics" | stats count(), sum(screen * 2 + 1), avg(total_screens - screen), sum(time - @2026-11-01) by name',
    # top
    'events | top 5 name',
    'events | where element == "interests" | top 4 value',
    'events | top 3 label',
    'sessions | top 3 answer("experience")',
    'sessions | top 4 exit',
    # histogram
    'sessions | histogram duration step 30s',
    'sessions | histogram furthest_screen',
    'events | histogram screen step 2',
    'events | where name == "screen_presented" | histogram dwell step 5s',
    'events | histogram value step 10',
    'sessions | histogram events step 2.5',
    # listings and table stages
    'events | where session == "inferred:0" | select seq, time, name, screen, value, label, dwell',
    'events | where kind == "state_updated" | select seq, element, value, label | limit 25',
    'sessions | select session, exit, duration, completed, answer("interests") | limit 30',
    'sessions | limit 20',
    'events | limit 15',
    'events | count by name | sort count desc | limit 5',
    'events | count by name | where count > 100 | sort name desc',
    'sessions | stats count(), p50(duration) by onboarding | sort p50(duration) desc | select onboarding, p50(duration)',
    'sessions | count by answer("experience") | sort answer("experience") desc',
    'events | count by value | sort value | limit 12',
    'events | count by value | where value == "music" or value > 20 or value == 30',
    'events | stats min(value) as low, max(value) as high by element | where low != "x" | sort high desc',
    'events | stats min(time) as first, count() by name | sort first desc | limit 6',
    'sessions | select session, started, ended, exit | where exit != "abandoned" | sort ended desc | limit 10',
    'events | select time, seq, dwell, time + 90s as later, time - @2026-11-01 as since | limit 10',
    # screen funnels
    'sessions | funnel',
    'sessions | where completed or closed | funnel',
    'sessions | funnel by variation',
    'sessions | funnel by screen_cid as cid',
    'sessions | funnel | where step >= 2 | sort sessions | limit 4',
    # custom funnels, every mode
    'sessions | funnel screen_presented(screen == 0), screen_presented(screen == 1), screen_presented(screen == 2)',
    'sessions | funnel onboarding_started, screen_completed, open_paywall within 30m',
    'sessions | funnel screen_presented, state_updated, screen_completed(screen >= 2), onboarding_completed within 10m mode ordered',
    'sessions | funnel onboarding_started, screen_presented, screen_presented mode strict ignoring (onboarding_loaded, state_updated)',
    'sessions | funnel screen_presented, state_updated, screen_completed mode strict ignoring (state_updated)',
    'sessions | funnel analytics, close mode strict ignoring (screen_presented, state_updated)',
    'sessions | funnel state_updated, screen_completed, user_email_collected within 5m mode strict ignoring (state_updated, custom)',
    'sessions | funnel open_paywall, onboarding_completed, close mode any',
    'sessions | funnel close, state_updated(element == "experience"), screen_presented within 2m mode any',
    'sessions | funnel error, onboarding_loaded mode any within 1s',
    'sessions | funnel screen_presented(screen == 0), screen_completed, open_paywall within 30m by placement',
    'sessions | funnel state_updated, screen_completed by value',
    'sessions | where onboarding == "nope" | funnel close, open_paywall',
    'sessions | funnel "navigation_failed", screen_presented mode any',
    'sessions | funnel open_paywall, close mode strict | where sessions > 0',
    # paths: repeats collapsed, the anchor's first event, sessions without it left out of the shares
    'sessions | where not completed | paths before end depth 3',
    'sessions | paths after screen_presented(screen == 4) depth 3',
    'sessions | paths before close depth 2',
    'sessions | paths after start depth 1',
    'sessions | paths before end depth 10 | limit 5',
    'sessions | paths after state_updated(element == "level") depth 2 | where sessions >= 2',
    'sessions | where onboarding == "nope" | paths before end',
    # integer arithmetic and sums past 64 bits are absent (NULL), not wrapped nor turned into doubles
    'events | stats sum(screen * 3000000000000000000), count()',
    'events | where screen == 3 | select seq * 3000000000000000000 + seq * 3000000000000000000 as twice | sort twice | limit 5',
    'events | stats sum(screen * 1000000000000000001) by onboarding',
    'events | stats sum((screen - 2) * 9000000000000000000 - (3 - screen) * 9000000000000000000)',
    # ... and so is arithmetic on integer result columns after a reduction (counts, sums, extremes, keys)
    'events | count by screen | where count * 4000000000000000000 > 0',
    'sessions | stats sum(events) as s by onboarding | where s * 3000000000000000000 > 0',
    'events | stats count() as n, count_distinct(session) as d, max(seq) as m by screen | where n * 6000000000000000 != 0 and d - 9223372036854775000 - 1000 != 0 and -m * 668000000000000 != 0',
    'sessions | top 3 furthest_screen | where furthest_screen * 1000000000000000000 != 0 and count - -9223372036854775760 != 0',
    'sessions | funnel screen_presented, screen_completed | select step, sessions as s, dropoff | where s * 23500000000000000 != 0 or step * dropoff * 4000000000000000000 != 0',
    'events | select seq * 1000000000000000 as big, screen | where big + big > 0 and screen * 2305843009213693952 * 2 >= 0 | sort big desc | limit 5',
]


VALUES = ['"pro"', '"music"', "30", "25.5"]
ANSWERS = ['"pro"', '"music"', '"beginner"', "30"]

# Ordered funnels also checked against ClickHouse's own windowFunnel (semantics rule 4 names it as the meaning
# of `mode ordered`): per step, the sessions whose windowFunnel level reaches it must equal Boardwalk's
# `sessions` column. (The translation does not use windowFunnel: see docs/clickhouse.md.)
WINDOW_FUNNELS = [
    (["screen_presented", "screen_completed", "open_paywall"], 1800),
    (["screen_presented", "state_updated", "screen_completed", "onboarding_completed"], 600),
    (["onboarding_started", "screen_presented", "close"], None),
    (["state_updated", "user_email_collected", "open_paywall"], 120),
]
# Not listed: funnels where one event can match two steps (`state_updated, state_updated`): windowFunnel lets
# one event advance several levels, Boardwalk's chain takes one event per step (docs/clickhouse.md).


FAMILIES = ["count", "stats", "top", "histogram", "list", "session", "funnel", "ordered", "strict", "any",
            "bucket", "nested", "compute", "presence", "sessionprop", "funnelby", "ci", "versus", "paths",
            "datecompare", "dateyear", "datebucket"]

REDUCTION = re.compile(r"\|\s*(count|stats|top|histogram|funnel)\b")
# Zones whose clocks change inside the generated data (Berlin on 2026-10-25, New York on 2026-11-01), a fixed
# offset, and the default (UTC).
ZONES = ["", ', "Europe/Berlin"', ', "America/New_York"', ', "+05:30"', ', "-03:00"', ', "UTC"']


def family_of(q):
    """The families a query belongs to (a sessions reduction is also a "session" query; a time bucket, a second
    reduction and a computed column after a reduction each add a family of their own)."""
    extra = []
    if re.search(r"\bci\(", q):
        extra.append("ci")
    if re.search(r"\|\s*versus\b", q):
        extra.append("versus")
    if re.search(r"\|\s*paths\b", q):
        return extra + ["paths"]
    if re.search(r"\b(hour|day|week|month)\(", q):
        extra.append("bucket")
    if re.search(r"\bis (absent|present)\b", q):
        extra.append("presence")
    if q.startswith("events") and "session." in q:
        extra.append("sessionprop")
    if re.search(r"\| funnel\b.*\bby\b.*(session\.|answer\(|\b(completed|exit|paywall|closed)\b)", q):
        extra.append("funnelby")
    if len(REDUCTION.findall(q)) >= 2:
        extra.append("nested")
    # A date picker's answer as a date: against a timestamp, its year, or bucketed.
    if re.search(r'(answer\("[a-z_]+"\)|value)\s*(<|>|<=|>=|==|!=)\s*@', q):
        extra.append("datecompare")
    if re.search(r'\byear\((session\.)?(answer\(|value)', q):
        extra.append("dateyear")
    if re.search(r'\b(day|week|month)\((session\.)?(answer\(|value)', q):
        extra.append("datebucket")
    first = REDUCTION.search(q)
    if first and re.search(r"\|\s*select\b[^|]*[-+*/]", q[first.end():]):
        extra.append("compute")
    return extra + base_family(q)


def base_family(q):
    if re.search(r"\| funnel\s*($|\||by\b)", q):
        return ["funnel"]
    if "| funnel" in q:
        return ["strict" if "mode strict" in q else "any" if "mode any" in q else "ordered"]
    families = []
    for name in ["top", "histogram", "stats", "count"]:
        if re.search(rf"\|\s*{name}\b", q):
            families.append(name)
            break
    else:
        families.append("list")
    if q.startswith("sessions"):
        families.append("session")
    return families


def query_generator(rng, onboardings, family):
    """Seeded random queries of one family."""
    ev_str = ["kind", "name", "onboarding", "screen_cid", "profile", "action", "element", "element_type", "reply",
              "placement", "variation", "input_type", "error_domain", "error_message"]
    ev_num = ["screen", "total_screens", "seq", "error_code"]
    se_str = ["onboarding", "placement", "variation", "exit", "profile"]
    se_num = ["events", "furthest_screen", "last_screen", "total_screens"]
    se_bool = ["completed", "paywall", "closed", "email_collected"]
    names = ["screen_presented", "screen_completed", "state_updated", "open_paywall", "close", "custom",
             "onboarding_started", "onboarding_completed", "user_email_collected", "analytics", "error"]
    answers = ["experience", "interests", "age", "goal", "email", "birthday"]

    def ev_pred(depth=0):
        r = rng.random()
        if depth < 2 and r < 0.2:
            return f'({ev_pred(depth + 1)} {rng.choice(["and", "or"])} {ev_pred(depth + 1)})'
        if depth < 2 and r < 0.27:
            return f"not {ev_pred(depth + 1)}"
        r = rng.random()
        if r < 0.3:
            return f'kind {rng.choice(["==", "!="])} "{rng.choice(["analytics", "state_updated", "close", "custom", "open_paywall"])}"'
        if r < 0.5:
            return f'screen {rng.choice(["<", "<=", ">", ">=", "==", "!="])} {rng.randint(0, 8)}'
        if r < 0.6:
            return f'onboarding == "{rng.choice(onboardings)}"'
        if r < 0.7:
            return f'value {rng.choice(["==", "!=", "<", ">"])} {rng.choice(VALUES)}'
        if r < 0.8:
            return f'name in ["{rng.choice(names)}", "{rng.choice(names)}"]'
        if r < 0.85:
            return f'reply {rng.choice(["==", "!="])} "{rng.choice(["yes", "no", "skip"])}"'
        if r < 0.92:
            return f'{rng.choice(["reply", "value", "element", "action", "label"])} is {rng.choice(["absent", "present"])}'
        return f'time >= @2026-11-01T0{rng.randint(0, 3)}:00:00Z'

    def se_pred(depth=0):
        r = rng.random()
        if depth < 2 and r < 0.2:
            return f'({se_pred(depth + 1)} {rng.choice(["and", "or"])} {se_pred(depth + 1)})'
        if depth < 2 and r < 0.27:
            return f"not {se_pred(depth + 1)}"
        r = rng.random()
        if r < 0.2:
            return rng.choice(se_bool)
        if r < 0.35:
            return f'did({rng.choice(names)})'
        if r < 0.45:
            return f'reached({rng.randint(0, 9)})'
        if r < 0.6:
            return f'answer("{rng.choice(answers)}") {rng.choice(["==", "!="])} {rng.choice(ANSWERS)}'
        if r < 0.7:
            return f'duration {rng.choice(["<", ">"])} {rng.randint(1, 6)}m'
        if r < 0.8:
            return f'exit {rng.choice(["==", "!="])} "{rng.choice(["completed", "paywall", "closed", "error", "abandoned"])}"'
        if r < 0.85:
            return f'onboarding in ["{rng.choice(onboardings)}", "{rng.choice(onboardings)}"]'
        if r < 0.9:
            field = rng.choice(["variation", "placement", 'answer("age")', 'answer("interests")'])
            return f'{field} is {rng.choice(["absent", "present"])}'
        return f'{rng.choice(se_num)} {rng.choice(["<", ">=", "=="])} {rng.randint(0, 20)}'

    def step():
        s = rng.choice(names)
        if rng.random() < 0.4:
            s += f"({ev_pred(1)})"
        return s

    def agg(source):
        if source == "events":
            f = rng.choice(["count()", "count(reply)", "count_distinct(session)", "count_distinct(value)",
                            "sum(screen)", "avg(total_screens)", "min(screen_cid)", "max(time)", "p50(screen)",
                            "p90(dwell)", "percentile(value, 0.77)", "rate(kind == \"analytics\")", "min(value)",
                            "avg(dwell)", "sum(value)"])
        else:
            f = rng.choice(["count()", "rate(completed)", "p50(duration)", "p95(duration)", "avg(events)",
                            "sum(furthest_screen)", "count_distinct(profile)", "min(started)", "max(exit)",
                            f'count(answer("{rng.choice(answers)}"))', f'avg(answer("age"))',
                            f'count_distinct(answer("{rng.choice(answers)}"))', "percentile(events, 0.25)",
                            "rate(did(open_paywall))"])
        return f

    def bucket(source):
        unit = rng.choice(["hour", "day", "week", "month"])
        field = "time" if source == "events" else rng.choice(["started", "ended"])
        return f"{unit}({field}{rng.choice(ZONES)})"

    def later(key):
        """Stages after `count by key`: a filter, a computed column, a second reduction."""
        return rng.choice([
            f" | where count > {rng.randint(0, 20)} | count",
            " | stats p50(count), max(count), sum(count), avg(count)",
            f" | histogram count step {rng.choice([1, 5, 20])}",
            " | count by count as times",
            f" | top 3 count as times | stats sum(count)",
            f" | where count >= {rng.randint(1, 5)} | stats count() as groups, min(count) as least",
        ])

    wanted = family
    while True:
        family = wanted
        if family == "sessionprop":
            prop = rng.choice(["session.completed", "not session.paywall", f'session.exit == "{rng.choice(["closed", "abandoned", "completed", "paywall"])}"',
                               f'session.answer("{rng.choice(answers)}") == {rng.choice(ANSWERS)}', "session.did(open_paywall)",
                               f"session.furthest_screen >= {rng.randint(0, 8)}", f'session.answer("{rng.choice(answers)}") is present',
                               f"session.duration > {rng.randint(1, 5)}m"])
            q = f"events | where {prop}"
            if rng.random() < 0.5:
                q += " and " + ev_pred()
            key = rng.choice(["screen", "kind", "name", "session.exit", f'session.answer("{rng.choice(answers)}")',
                              "session.variation", "session.completed"])
            q += rng.choice([f" | count by {key}", f" | stats count(), count_distinct(session) by {key}",
                             " | where name == \"screen_presented\" | stats p50(dwell), p90(dwell) by screen",
                             f" | count by {key} | where count > 2 | count"])
            yield q
            continue
        if family == "funnelby":
            key = rng.choice(['answer("experience")', 'answer("interests")', "session.variation", "completed",
                              "exit", "session.placement", 'session.answer("age")'])
            q = "sessions"
            if rng.random() < 0.3:
                q += " | where " + se_pred()
            if rng.random() < 0.4:
                q += f" | funnel by {key}"
            else:
                steps = ", ".join(step() for _ in range(rng.randint(2, 3)))
                q += f" | funnel {steps} within {rng.choice(['2m', '10m', '1h'])} mode {rng.choice(['ordered', 'strict', 'any'])} by {key}"
            yield q
            continue
        if family in ("datecompare", "dateyear", "datebucket"):
            element = rng.choice(["birthday", "exam_date", "start_date"])
            answer = f'answer("{element}")'
            literal = "@" + rng.choice(["1990-01-01", "2000-01-01", "1975-06-15", "2005-12-31", "2026-11-01T12:00:00Z"])
            zone = rng.choice(["", ', "UTC"', ', "-05:00"', ', "Europe/Berlin"'])
            compare = rng.choice([f"{answer} {rng.choice(['<', '<=', '>', '>=', '==', '!='])} {literal}",
                                  f"{answer} is present and {answer} < {literal}"])
            year = f"year({answer}{zone}) {rng.choice(['<', '==', '>='])} {rng.randint(1950, 2010)}"
            bucket = f"{rng.choice(['month', 'week', 'day'])}({answer}{zone})"
            if family == "datecompare":
                q = rng.choice([f"sessions | where {compare} | count",
                                f"sessions | where {compare} | stats count(), rate(completed) by variation",
                                f"events | where session.{answer} {rng.choice(['<', '>=', '!='])} {literal}"
                                f" | count by {rng.choice(['screen', 'kind'])}",
                                f'events | where element == "{element}" and value {rng.choice(["<", ">=", "!="])} '
                                f"{literal} | count by value"])
            elif family == "dateyear":
                q = rng.choice([f"sessions | where {year} | count",
                                f"sessions | count by year({answer}{zone})",
                                f"sessions | stats count(), rate(completed) by year({answer})",
                                f'events | where element == "{element}" | count by year(value{zone})',
                                f"sessions | count by year({answer}) | where count > 1 | stats sum(count)"])
            else:
                q = rng.choice([f"sessions | count by {bucket}",
                                f"sessions | where {answer} is present | stats count() by {bucket}",
                                f'events | where element == "{element}" | count by {rng.choice(["month", "week", "day"])}'
                                f"(value{zone})",
                                f"sessions | where {bucket} >= {literal} | count"])
            yield q
            continue
        if family == "ci":
            source = rng.choice(["events", "sessions"])
            q = source
            if rng.random() < 0.4:
                q += " | where " + (ev_pred() if source == "events" else se_pred())
            condition = ev_pred() if source == "events" else se_pred()
            level = rng.choice(["", ", 0.5", ", 0.9", ", 0.99", ", 0.999999"])
            keys = (ev_str + ev_num if source == "events" else se_str + se_bool + [f'answer("{a}")' for a in answers])
            by = rng.sample(keys, rng.choice([0, 1, 1, 2]))
            q += f" | stats count(), rate({condition}) as r, ci({condition}{level}) as r" + (
                " by " + ", ".join(by) if by else "")
            yield q
            continue
        if family == "versus":
            # Keys whose baseline group every generated store has.
            key, baseline = rng.choice([("exit", '"abandoned"'), ("completed", "false"), ("paywall", "true"),
                                        ('answer("level")', '"beginner"'), ("onboarding", f'"{onboardings[0]}"'),
                                        ("session.answer(\"level\")", '"pro"')])
            q = "sessions"
            if rng.random() < 0.3:
                q += " | where " + se_pred()
            if rng.random() < 0.5 and not key.startswith("session."):
                rates = list(dict.fromkeys(rng.choice(["rate(completed)", "rate(paywall) as pw", "rate(did(close))",
                                                       f"rate({se_pred()}) as r"]) for _ in range(rng.randint(1, 3))))
                q += f" | stats count(), {', '.join(rates)} by {key}"
            elif rng.random() < 0.4 and key in ("exit", "onboarding", "session.answer(\"level\")"):
                q += f" | funnel by {key}"
            else:
                steps = ", ".join(step() for _ in range(rng.randint(2, 3)))
                q += f" | funnel {steps} within {rng.choice(['2m', '10m', '1h'])} by {key}"
            q += f" | versus {baseline}"
            yield q
            continue
        if family == "paths":
            q = "sessions"
            if rng.random() < 0.3:
                q += " | where " + se_pred()
            anchor = rng.choice(["after start", "before end", "after " + step(), "before " + step()])
            q += f" | paths {anchor}" + (f" depth {rng.randint(1, 6)}" if rng.random() < 0.8 else "")
            if rng.random() < 0.3:
                q += rng.choice([" | where sessions >= 3", " | limit 5", " | sort path desc", " | where share < 0.1"])
            yield q
            continue
        if family == "presence":
            source = rng.choice(["events", "sessions"])
            if source == "events":
                field = rng.choice(["reply", "value", "element", "action", "dwell", "label", "screen"])
                q = f"events | where {field} is {rng.choice(['absent', 'present'])}"
                q += rng.choice([" | count", " | count by kind", f" | stats count(), count({field})"])
            else:
                field = rng.choice(["variation", "placement", 'answer("age")', 'answer("interests")',
                                    'answer("experience")', "last_screen"])
                q = f"sessions | where {field} is {rng.choice(['absent', 'present'])}"
                q += rng.choice([" | count", " | count by exit", " | stats rate(completed)"])
            yield q
            continue
        if family in ("bucket", "nested", "compute"):
            source = rng.choice(["events", "sessions"])
            keys = (ev_str + ev_num if source == "events" else se_str + se_num + se_bool)
            q = source
            if rng.random() < 0.3:
                q += " | where " + (ev_pred() if source == "events" else se_pred())
            if family == "bucket":
                b = bucket(source)
                r = rng.random()
                if r < 0.4:
                    q += f" | count by {b}" + (f", {rng.choice(keys)}" if rng.random() < 0.3 else "")
                elif r < 0.7:
                    other = agg(source)
                    q += f" | stats count(){'' if other == 'count()' else ', ' + other} by {b}"
                elif r < 0.85:
                    q += f" | where {b} >= @2026-10-28 | count by {b}"
                else:
                    q += f" | stats min({b}) as first, max({b}) as last | select first, last, last - first as span"
            elif family == "nested":
                key = rng.choice(keys + [bucket(source)])
                q += f" | count by {key}" + later(key)
            else:
                if source == "sessions" and rng.random() < 0.5:
                    by = rng.choice(se_str + se_bool)
                    q += (f" | stats count() as n, rate(completed) as cr, p50(duration) as med by {by}"
                          f" | select {by}, n, cr * 100 as pct, med / 2 as half, n - 1 as rest")
                    filters = ["pct >= 50", "rest > 0", "half > 30s"]
                else:
                    key = rng.choice(keys)
                    q += f" | count by {key} | select {key}, count * 2 + 1 as odd, count / 4 as quarter"
                    filters = ["odd > 3", "quarter < 10"]
                if rng.random() < 0.3:
                    q += " | where " + rng.choice(filters)
            yield q
            continue
        source = "sessions" if family in ("funnel", "ordered", "strict", "any", "session") else rng.choice(["events", "sessions"])
        if family == "session":
            family = rng.choice(["count", "stats", "top", "histogram", "list"])
        q = source
        for _ in range(rng.choice([0, 1, 1, 2])):
            q += " | where " + (ev_pred() if source == "events" else se_pred())
        keys = ev_str + ev_num + ["value", "label", "option"] if source == "events" else se_str + se_num + se_bool + [
            f'answer("{a}")' for a in answers]
        if family == "count":
            by = rng.sample(keys, rng.choice([0, 1, 1, 2]))
            q += " | count" + (" by " + ", ".join(by) if by else "")
            if by and rng.random() < 0.4:
                q += rng.choice([f" | where count > {rng.randint(1, 50)}", f" | sort count desc | limit {rng.randint(1, 8)}",
                                 f" | sort {by[0]} desc", f" | where {by[0]} != \"x\" | limit {rng.randint(1, 8)}"])
        elif family == "stats":
            aggs = list(dict.fromkeys(agg(source) for _ in range(rng.randint(1, 3))))
            by = rng.sample(keys, rng.choice([0, 1, 1, 2]))
            q += " | stats " + ", ".join(aggs) + (" by " + ", ".join(by) if by else "")
        elif family == "top":
            q += f" | top {rng.randint(1, 6)} {rng.choice(keys)}"
        elif family == "histogram":
            if source == "events":
                q += rng.choice([" | histogram screen", " | histogram dwell step 10s", " | histogram value step 5"])
            else:
                q += rng.choice([" | histogram duration", " | histogram events step 3", " | histogram furthest_screen step 2"])
        elif family == "list":
            cols = rng.sample(keys, rng.randint(1, 3))
            q += " | select " + ", ".join(cols) + f" | limit {rng.randint(1, 40)}"
        elif family == "funnel":
            q += " | funnel" + (f" by {rng.choice(['placement', 'variation', 'screen_cid as cid', 'onboarding'])}" if rng.random() < 0.3 else "")
        else:
            steps = ", ".join(step() for _ in range(rng.randint(1, 4)))
            mode = family
            q += f" | funnel {steps}"
            if rng.random() < 0.6:
                q += f" within {rng.choice(['30s', '2m', '10m', '1h'])}"
            q += f" mode {mode}"
            if mode == "strict" and rng.random() < 0.8:
                q += " ignoring (" + ", ".join(rng.sample(["state_updated", "onboarding_loaded", "custom", "screen_completed", "analytics"], rng.randint(1, 3))) + ")"
            if rng.random() < 0.25:
                q += f" by {rng.choice(['placement', 'variation', 'screen', 'value', 'kind'])}"
        yield q


TIME = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?$")


def normalize(v, answer):
    """One cell, from either side, in a comparable form."""
    if answer and isinstance(v, str):
        v = json.loads(v)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, str) and TIME.match(v):
        return v.replace("T", " ").rstrip("Z")
    if isinstance(v, list):
        return tuple(normalize(x, False) for x in v)
    # Kept apart from None: a NaN or an infinity where the other engine says "absent" is a mismatch.
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, float) and math.isinf(v):
        return ("inf", v > 0)
    return v


def close(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if a == b:
            return True
        return abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    return a == b


def sort_key(row):
    return tuple((0, "") if c is None else (1, f"{c:.6g}") if isinstance(c, (int, float)) else (2, repr(c)) for c in row)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boardwalk", default=os.path.join(ROOT, ".build", "debug", "boardwalk"))
    parser.add_argument("--sessions", type=int, default=400)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--per-family", type=int, default=30,
                        help="generate queries until each family has this many (default 30)")
    parser.add_argument("--generated", type=int, default=0, help="further seeded random queries of any family")
    parser.add_argument("--venv", default=os.path.join(ROOT, ".build", "clickhouse-venv"))
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    parser.add_argument("--only", help="run only this query")
    args = parser.parse_args()
    ensure_venv(args.venv)
    from chdb import session as chsession

    work = tempfile.mkdtemp(prefix="boardwalk-chdiff-")
    bw = args.boardwalk
    db = os.path.join(work, "db")

    def run(cmd, **kw):
        return subprocess.run(cmd, capture_output=True, text=True, **kw)

    try:
        events = os.path.join(work, "events.ndjson")
        with open(events, "w") as out:
            # Ten days around Berlin's and New York's clock changes, for the time buckets.
            subprocess.check_call([bw, "generate", "-n", str(args.sessions), "--seed", str(args.seed),
                                   "--start", "2026-10-23T12:00:00Z", "--days", "10"], stdout=out)
        subprocess.check_call([bw, "--db", db, "ingest", "-q", "--rejects", os.path.join(work, "rejects.txt"), events])
        rows = os.path.join(work, "rows.jsonl")
        # Incremental sync: the first half, then the rest from the seq the first run printed.
        first = subprocess.run([bw, "--db", db, "export", "--format", "clickhouse"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
        lines = first.stdout.splitlines(keepends=True)
        total = len(lines)
        half = json.loads(lines[total // 2])["seq"]
        last = json.loads(lines[-1])["seq"]
        with open(rows, "w") as out:
            out.writelines(lines[:total // 2])
        ddl = run([bw, "export", "--format", "clickhouse", "--schema"]).stdout
        chs = chsession.Session(os.path.join(work, "chdb"))
        chs.query(ddl)
        chs.query(f"INSERT INTO boardwalk_events FROM INFILE '{rows}' FORMAT JSONEachRow")
        rest = os.path.join(work, "rest.jsonl")
        with open(rest, "w") as out:
            second = subprocess.run([bw, "--db", db, "export", "--format", "clickhouse", "--since-seq", str(half)],
                                    stdout=out, stderr=subprocess.PIPE, text=True, check=True)
        assert f"next: --since-seq {last + 1}" in second.stderr, second.stderr
        chs.query(f"INSERT INTO boardwalk_events FROM INFILE '{rest}' FORMAT JSONEachRow")
        loaded = int(chs.query("SELECT count() FROM boardwalk_events", "CSV").data().strip())
        if loaded != total:
            sys.exit(f"clickhouse_diff: loaded {loaded} rows, the store holds {total}")

        onboardings = [r["onboarding"] for r in json.loads(run(
            [bw, "--db", db, "query", "--format", "json", "sessions | count by onboarding"]).stdout) if r["onboarding"]]
        rng = random.Random(args.seed)
        # The fixed list, then generated queries until every family has at least --per-family queries.
        queries = [args.only] if args.only else list(FIXED)
        if not args.only:
            for family in FAMILIES:
                generated = query_generator(rng, onboardings, family)
                have = sum(family in family_of(q) for q in queries)
                queries += [next(generated) for _ in range(max(0, args.per_family - have))]
            queries += [next(query_generator(rng, onboardings, rng.choice(FAMILIES))) for _ in range(args.generated)]
        per_family = {f: sum(f in family_of(q) for q in queries) for f in FAMILIES}
        failures = 0
        compared = 0
        empty = 0
        refused = 0
        for q in queries:
            mine = run([bw, "--db", db, "query", "--format", "json", q])
            if mine.returncode != 0 and "error: no group of" in mine.stderr:
                # `versus` a group the filters left out: ClickHouse must refuse it too.
                sql = run([bw, "query", "--sql", "clickhouse", q]).stdout
                try:
                    chs.query(sql, "JSON")
                    print(f"FAIL (clickhouse has the group `versus` names, boardwalk does not): {q}\n--- SQL\n{sql}")
                    failures += 1
                except Exception as error:  # chdb raises its own error types
                    if "no group of" not in str(error):
                        print(f"FAIL (clickhouse error): {q}\n{error}")
                        failures += 1
                    refused += 1
                    # The session keeps the header of the refused query's output and hands it to the next query's
                    # result: a throwaway query takes it.
                    chs.query("SELECT 1", "CSV")
                continue
            if mine.returncode != 0:
                print(f"FAIL (boardwalk): {q}\n{mine.stderr}")
                failures += 1
                continue
            translated = run([bw, "query", "--sql", "clickhouse", q])
            if translated.returncode != 0:
                print(f"FAIL (translation): {q}\n{translated.stderr}")
                failures += 1
                continue
            sql = translated.stdout
            answer_columns = set()
            if sql.startswith("-- answer columns (JSON text): "):
                answer_columns = set(json.loads(sql.splitlines()[0].split(": ", 1)[1]))
            try:
                result = chs.query(sql + "\nSETTINGS output_format_json_quote_64bit_integers = 0", "JSON").data()
                theirs = json.loads(result)
            except Exception as error:  # chdb raises its own error types
                print(f"FAIL (clickhouse error): {q}\n{error}\n--- SQL\n{sql}")
                failures += 1
                continue
            bw_rows = json.loads(mine.stdout)
            if bw_rows:
                bw_columns = list(bw_rows[0].keys())
            else:
                # An empty JSON array names no columns; the CSV header does.
                header = run([bw, "--db", db, "query", "--format", "csv", q])
                bw_columns = next(csv.reader(io.StringIO(header.stdout)), None) if header.returncode == 0 else None
            ch_columns = [m["name"] for m in theirs["meta"]]
            problem = None
            if bw_columns is not None and bw_columns != ch_columns:
                problem = f"columns differ: {bw_columns} vs {ch_columns}"
            a = [tuple(normalize(r[c], False) for c in r) for r in bw_rows]
            b = [tuple(normalize(r[c], c in answer_columns) for c in ch_columns) for r in theirs["data"]]
            ordered = re.search(r"\|\s*(top|limit|sort)\b", q) is not None
            if not ordered:
                a.sort(key=sort_key)
                b.sort(key=sort_key)
            if problem is None and len(a) != len(b):
                problem = f"{len(a)} rows vs {len(b)}"
            if problem is None:
                for i, (x, y) in enumerate(zip(a, b)):
                    if len(x) != len(y) or not all(close(p, q2) for p, q2 in zip(x, y)):
                        problem = f"row {i} differs:\n  boardwalk:  {x}\n  clickhouse: {y}"
                        break
            compared += len(a)
            empty += not a
            if problem:
                failures += 1
                print(f"FAIL: {q}\n{problem}\n--- boardwalk\n{json.dumps(bw_rows)[:3000]}\n--- clickhouse\n"
                      f"{json.dumps(theirs['data'])[:3000]}\n--- SQL\n{sql}")
        for steps, window in WINDOW_FUNNELS if not args.only else []:
            q = "sessions | funnel " + ", ".join(steps) + (f" within {window}s" if window else "")
            mine = json.loads(run([bw, "--db", db, "query", "--format", "json", q]).stdout)
            conditions = ", ".join(f"(kind = '{x}' OR name = '{x}')" for x in steps)
            micros = (window or 10 ** 12) * 1_000_000
            sql = (f"SELECT level, count() AS n FROM (SELECT windowFunnel({micros})(toUInt64(toUnixTimestamp64Micro(time)), "
                   f"{conditions}) AS level FROM boardwalk_events GROUP BY session) GROUP BY level")
            levels = {int(r[0]): int(r[1]) for r in json.loads(chs.query(sql, "JSONCompact").data())["data"]}
            reached = [sum(n for level, n in levels.items() if level >= k) for k in range(1, len(steps) + 1)]
            if reached != [r["sessions"] for r in mine]:
                failures += 1
                print(f"FAIL (windowFunnel): {q}\n  boardwalk sessions per step: {[r['sessions'] for r in mine]}\n"
                      f"  windowFunnel levels reached: {reached}\n--- SQL\n{sql}")
            queries.append(q)
        print(f"clickhouse_diff: {len(queries) - failures}/{len(queries)} queries agree "
              f"({args.sessions} sessions, {total} events, seed {args.seed}; {compared} rows compared, "
              f"{empty} empty results, {refused} refused by both)\nqueries per family: " + ", ".join(f"{f} {n}" for f, n in per_family.items()))
        return 1 if failures else 0
    finally:
        if args.keep:
            print(f"clickhouse_diff: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
