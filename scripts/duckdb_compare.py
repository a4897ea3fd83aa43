#!/usr/bin/env python3
"""Asks Boardwalk, DuckDB and ClickHouse (embedded, chdb) the same questions over the same events, checks that
the three give the same answers, then times each at one thread and at every core, and prints the ratios.

Setup (DuckDB and chdb come from PyPI; chdb is about 900 MB):

    python3 -m venv .venv && .venv/bin/pip install duckdb chdb
    swift build -c release --static-swift-stdlib --product boardwalk
    .venv/bin/python scripts/duckdb_compare.py --sessions 50000 --workdir /tmp/bw-50k --keep
    .venv/bin/python scripts/duckdb_compare.py --sessions 50000 --workdir /tmp/bw-50k --reuse   # again, no rebuild

What it does:
  1. `boardwalk generate` a corpus over --onboardings onboardings (default 50, as in the performance targets),
     `boardwalk ingest` it into a fresh store (skipped with --reuse when the work directory already has the store,
     the Parquet file and the ClickHouse table).
  2. Gives the store's events (its sessions, inferred ones included) to the two peers, each in the layout that
     suits it best for these questions, clustered like the store's key (onboarding, screen, time):
     - DuckDB: `boardwalk export --format csv`, written to Parquet ordered by (onboarding, screen, time, seq),
       which lets DuckDB skip row groups for one onboarding;
     - ClickHouse: `boardwalk export --format clickhouse` loaded into the MergeTree table of
       `boardwalk export --format clickhouse --schema` (ORDER BY the store's key, docs/clickhouse.md) in a chdb
       session directory, as scripts/clickhouse_diff.py loads it.
  3. Asks every question of the families below in the three engines. Boardwalk runs the query; ClickHouse runs
     the SQL that `boardwalk query --sql clickhouse` translates it to (the engine's own translation, so this also
     checks it at this size); DuckDB runs SQL written in this file from the rules of docs/analytics-semantics.md.
     - screen funnels (rule 3):                     sessions | funnel
       over the whole store, the busiest onboarding, the onboarding of median size (the generator's onboardings
       are very unequal), and the sessions that started in the store's last stretch (the latest 15 % of session
       starts, cut to a whole second):           sessions | where started >= @… | funnel
     - a count by an event field over every event: events | where kind == "analytics" | count by name
       and of one analytics name:                  events | where name == "onboarding_completed" | count by variation
     - counts and rates by a session field:         sessions | count by onboarding
                                                    sessions | stats count(), rate(completed) by variation
     - custom funnels of the busiest onboarding (rules 4 and 5), in each mode:
         sessions | where onboarding == "…" | funnel screen_presented(screen == 0), screen_completed(screen == 2),
             open_paywall within 30m mode ordered    (and mode strict, and mode any)
       and a strict funnel whose `ignoring` lets the SDK's same-millisecond events through:
         … | funnel screen_presented(screen == 1), screen_completed(screen == 1), screen_presented(screen == 2)
             within 30m mode strict ignoring (state_updated, second_screen_presented, products_screen_presented)
       (the DuckDB SQL for `strict` takes the next event that is not ignored as the next step, which is the rule
       when no step matches an ignored event, as here; it is not the general case)
     - dwell percentiles by screen (rule 7):       events | where name == "screen_presented"
                                                        | stats p50(dwell), p90(dwell) by screen
     - a time range:                               events | where time >= @… and time < @… | count
       (the second quarter of the store's time span, cut to whole seconds)
     - one onboarding's events, with and without a property of each event's session (`session.completed`):
         events | where onboarding == "…" and name == "screen_presented" [and session.completed] | count by screen
     - the busiest onboarding's screen funnel by an answer (rule 12, the session's last answer):
         sessions | where onboarding == "…" | funnel by answer("level")
     - a time bucket:                              sessions | count by day(started)
     - a second reduction over a first:            sessions | count by profile | where count > 1 | count
  4. Before anything is timed, compares every question's rows across the three engines, at one thread and at
     every core: Boardwalk's against DuckDB's on the columns the SQL computes (funnels: step, sessions and times;
     the others: every column), numbers to 1e-6 relative; Boardwalk's against ClickHouse's on every column and
     its name, numbers to 1e-9 relative (as scripts/clickhouse_diff.py). Any difference stops the script with the
     query and the rows of both.
  5. Times each question at one thread and at every core (Boardwalk `query --threads 1` and the REPL's
     `.threads 1` against its default; DuckDB `SET threads = 1` against its default; chdb `max_threads = 1`
     against its default), three ways:
     - first query: each engine's first query in a new process, from an open store, connection or session to
       the rows. Boardwalk's is the query's own time that `boardwalk query --timing` prints (parse, plan, read,
       reduce, render; the store's open time is printed beside it), which pays the process's first touch of
       every page of the store it reads; DuckDB's and ClickHouse's are timed around the query and its rows in a
       new Python process (the interpreter, the module, the connection or chdb session are not counted).
     - repeated: the same query again in one process: a `boardwalk repl`, best after the first; DuckDB on one
       open connection; chdb in one session, best after the first.
     - command: the whole `boardwalk query` process (start, open, plan, read, render), printed beside them.
     Ratios are the peer's time / Boardwalk's, first with first and repeated with repeated.
     The start-up of a trivial command (`boardwalk --version`) is printed too.
Times are the best of --runs runs. The machine is shared and noisy: read the ratios. --only runs some questions,
--threads 1 or --threads all one setting. --paired N adds N rounds of the first queries timed back to back (which
engine goes first alternates) and the median of the rounds' ratios.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import namedtuple

try:
    import duckdb
    import chdb
except ImportError:
    sys.exit("duckdb and chdb are needed: python3 -m venv .venv && .venv/bin/pip install duckdb chdb")

# The screen funnel of docs/analytics-semantics.md rule 3: step i counts sessions whose furthest screen index
# is >= i; steps run from 0 to the largest total_screens (or furthest index + 1) among the sessions in scope;
# median_time is the median (linear interpolation, rule 6) over sessions of the time from the session's first
# event to its first event at a screen >= i.
FUNNEL_SQL = """
WITH ev AS (
    SELECT session, epoch_us(time) AS t, screen, total_screens
    FROM read_parquet(?) {where}
),
s AS (
    SELECT session, min(t) AS t0, max(screen) AS furthest, max(total_screens) AS total
    FROM ev GROUP BY session
),
n AS (SELECT max(greatest(coalesce(total, 0), coalesce(furthest + 1, 0))) AS steps FROM s),
st AS (SELECT range AS step FROM range(0, (SELECT steps FROM n))),
reach AS (
    SELECT e.session, st.step, min(e.t) AS t
    FROM ev e JOIN st ON e.screen >= st.step
    GROUP BY e.session, st.step
)
SELECT st.step, count(r.session) AS sessions, quantile_cont((r.t - s.t0) / 1e6, 0.5) AS median_time
FROM st LEFT JOIN reach r ON r.step = st.step LEFT JOIN s ON s.session = r.session
GROUP BY st.step ORDER BY st.step
"""

# Analytics events by name, over every event.
NAMES_SQL = """
SELECT name, count(*) AS count FROM read_parquet(?) WHERE kind = 'analytics' GROUP BY name ORDER BY name
"""

# Sessions by their onboarding: that of the session's first event with `meta` (by (time, seq)); none is a group
# of its own, last.
# One analytics name by an event field: the rows of `count by` in key order, absent last.
COMPLETIONS_SQL = """
SELECT variation, count(*) AS count FROM read_parquet(?) WHERE kind = 'analytics' AND name = 'onboarding_completed'
GROUP BY variation ORDER BY variation NULLS LAST
"""

ONBOARDINGS_SQL = """
SELECT onboarding, count(*) AS count FROM (
    SELECT arg_min(onboarding, (epoch_us(time), seq)) FILTER (WHERE onboarding IS NOT NULL) AS onboarding
    FROM read_parquet(?) GROUP BY session
) GROUP BY onboarding ORDER BY onboarding NULLS LAST
"""

# Sessions and the share that completed, by variation: the first variation any of the session's events carries;
# `completed` is an `onboarding_completed` anywhere in the session.
VARIATIONS_SQL = """
SELECT variation, count(*) AS count, avg(completed::DOUBLE) AS rate FROM (
    SELECT arg_min(variation, (epoch_us(time), seq)) FILTER (WHERE variation IS NOT NULL) AS variation,
           bool_or(kind = 'analytics' AND name = 'onboarding_completed') AS completed
    FROM read_parquet(?) GROUP BY session
) GROUP BY variation ORDER BY variation NULLS LAST
"""

# Dwell (rule 7): a `screen_presented` at index i lasts until the session's next event at another screen index
# (events without one do not end it) or its next terminal event (onboarding_completed, open_paywall, close,
# error), whichever comes first; with neither it is censored. The events with a screen index fall into runs of
# one index, so "the next event at another index" is the first event of the next run.
DWELL_SQL = """
WITH ev AS (
    SELECT session, epoch_us(time) AS t, screen, kind, name,
           row_number() OVER (PARTITION BY session ORDER BY epoch_us(time), seq) AS rn,
           kind IN ('open_paywall', 'close', 'error') OR (kind = 'analytics' AND name = 'onboarding_completed')
               AS terminal
    FROM read_parquet(?)
),
indexed AS (
    SELECT session, rn, sum(CASE WHEN screen IS DISTINCT FROM previous THEN 1 ELSE 0 END)
               OVER (PARTITION BY session ORDER BY rn) AS run
    FROM (SELECT session, rn, screen, lag(screen) OVER (PARTITION BY session ORDER BY rn) AS previous
          FROM ev WHERE screen IS NOT NULL)
),
run_start AS (SELECT session, run, min(rn) AS rn FROM indexed GROUP BY session, run),
ends AS (
    SELECT session, rn, min(CASE WHEN terminal THEN rn END)
               OVER (PARTITION BY session ORDER BY rn ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS terminal_rn
    FROM ev
),
shown AS (
    SELECT p.screen, p.t, least(x.terminal_rn, nr.rn) AS end_rn, p.session
    FROM ev p
    JOIN ends x ON x.session = p.session AND x.rn = p.rn
    JOIN indexed i ON i.session = p.session AND i.rn = p.rn
    LEFT JOIN run_start nr ON nr.session = p.session AND nr.run = i.run + 1
    WHERE p.kind = 'analytics' AND p.name = 'screen_presented'
),
dwell AS (
    SELECT s.screen, e.t - s.t AS dwell, s.end_rn IS NULL AS censored
    FROM shown s LEFT JOIN ev e ON e.session = s.session AND e.rn = s.end_rn
)
SELECT screen, quantile_cont(dwell, 0.5) / 1e6 AS p50, quantile_cont(dwell, 0.9) / 1e6 AS p90,
       count(*) FILTER (WHERE censored) AS censored
FROM dwell GROUP BY screen ORDER BY screen NULLS LAST
"""

# Events in [from, to): times as seconds since the epoch.
TIME_RANGE_SQL = """
SELECT count(*) AS count FROM read_parquet(?) WHERE time >= to_timestamp(?) AND time < to_timestamp(?)
"""

# A property of each event's session (`session.completed`: the session has an `onboarding_completed` anywhere),
# on one onboarding, and the same count without it.
SESSION_PROPERTY_SQL = """
SELECT screen, count(*) AS count FROM read_parquet(?)
WHERE onboarding = ? AND name = 'screen_presented' AND session IN
    (SELECT session FROM read_parquet(?) WHERE kind = 'analytics' AND name = 'onboarding_completed')
GROUP BY screen ORDER BY screen
"""
EVENTS_SQL = """
SELECT screen, count(*) AS count FROM read_parquet(?) WHERE onboarding = ? AND name = 'screen_presented'
GROUP BY screen ORDER BY screen
"""

# The screen funnel (rule 3) by the session's last answer to `level` (rule 9, last write wins by (time, seq)),
# each group to its own sessions' steps; no answer is a group of its own, last.
FUNNEL_BY_ANSWER_SQL = """
WITH ev AS (
    SELECT session, epoch_us(time) AS t, seq, screen, total_screens, kind, element, value
    FROM read_parquet(?) {where}
),
ans AS (
    SELECT session, arg_max(value, (t, seq)) AS k FROM ev
    WHERE kind = 'state_updated' AND element = 'level' GROUP BY session
),
s AS (
    SELECT ev.session, min(t) AS t0, max(screen) AS furthest, max(total_screens) AS total, any_value(ans.k) AS k
    FROM ev LEFT JOIN ans ON ans.session = ev.session GROUP BY ev.session HAVING max(screen) IS NOT NULL
),
g AS (SELECT k, max(greatest(coalesce(total, 0), furthest + 1)) AS steps FROM s GROUP BY k),
st AS (SELECT range AS step FROM range(0, (SELECT max(steps) FROM g))),
reach AS (
    SELECT e.session, st.step, min(e.t) AS t FROM ev e JOIN st ON e.screen >= st.step GROUP BY e.session, st.step
),
rs AS (SELECT r.step, r.t - s.t0 AS dt, s.k FROM reach r JOIN s ON s.session = r.session)
SELECT g.k, st.step, count(rs.dt) AS sessions, quantile_cont(rs.dt / 1e6, 0.5) AS median_time
FROM g JOIN st ON st.step < g.steps
LEFT JOIN rs ON rs.step = st.step AND rs.k IS NOT DISTINCT FROM g.k
GROUP BY g.k, st.step ORDER BY g.k NULLS LAST, st.step
"""

# Sessions by the UTC day of their first event.
DAY_SQL = """
SELECT strftime(DATE '1970-01-01' + CAST(floor(t0 / 86400000000) AS INTEGER), '%Y-%m-%d') AS day, count(*) AS count
FROM (SELECT min(epoch_us(time)) AS t0 FROM read_parquet(?) WHERE session IS NOT NULL GROUP BY session)
GROUP BY day ORDER BY day
"""

# Profiles with more than one session: a count over the rows of a count (a session's profile is the first any
# of its events carries; none is a group of its own).
NESTED_SQL = """
SELECT count(*) AS count FROM (
    SELECT profile FROM (
        SELECT session, arg_min(profile, (epoch_us(time), seq)) FILTER (WHERE profile IS NOT NULL) AS profile
        FROM read_parquet(?) WHERE session IS NOT NULL GROUP BY session
    ) GROUP BY profile HAVING count(*) > 1
)
"""

# A custom funnel's last part, whatever the mode (rules 4 and 5): `chains` has one row per candidate chain
# (session, p1: the position of its first event, lv: the steps it reached, times: microseconds from its first
# step to each step); a session keeps its longest chain, of equally long ones the earliest; step k counts the
# sessions of level >= k, with the mean, median and p90 of their time to step k.
FUNNEL_STEPS_SQL = """
best AS (SELECT session, max(lv) AS lv, arg_min(times, (-lv, p1)) AS times FROM chains GROUP BY session),
st AS (SELECT range AS step FROM range(1, {steps} + 1))
SELECT st.step, count(b.session) AS sessions, avg(b.times[st.step]) / 1e6 AS mean_time,
       quantile_cont(b.times[st.step], 0.5) / 1e6 AS median_time,
       quantile_cont(b.times[st.step], 0.9) / 1e6 AS p90_time
FROM st LEFT JOIN best b ON b.lv >= st.step GROUP BY st.step ORDER BY st.step
"""


def step_sql(name, screen=None):
    """A funnel step as SQL: the event's kind or analytics name, and its screen index when one is given."""
    match = f"(kind = '{name}' OR name = '{name}')"
    return match if screen is None else f"{match} AND coalesce(screen = {screen}, false)"


def custom_funnel_sql(steps, mode, within_us=None, ignoring=(), where=""):
    """DuckDB SQL for `funnel s1, s2, … [within D] mode M [ignoring (…)]` (rules 4 and 5) over the events
    `where` keeps; `steps` are SQL conditions (`step_sql`).

    - ordered: from each event matching step 1, each later step is the first later event that matches it inside
      the window; taking the earliest at each step reaches the deepest level a start can reach, and is the
      earliest chain of that level.
    - strict: each later step must be the next event that is not ignored, and match the step inside the window.
      This is rule 4 only when no step matches an ignored event (otherwise an ignored event may be the next step
      and the chain is no longer determined by its start); the funnels this script asks satisfy that.
    - any: every event matching some step anchors a window [t, t + D]; step k's first time in it is the first
      matching event there; the level is the number of leading steps present; step k is done at the latest of
      steps 1 … k's first times, measured from step 1's.
    """
    if mode == "any":
        chains = any_chains_sql(len(steps), within_us)
    else:
        chains = step_chains_sql(mode == "strict", len(steps), within_us)
    return funnel_events_sql(steps, ignoring, where) + chains + FUNNEL_STEPS_SQL.format(steps=len(steps))


def funnel_events_sql(steps, ignoring, where):
    """`ev`: each session's events in (time, seq) order (`rn`), with a flag per step (`m1` …) and the position of
    the next event that `ignoring` does not list (`nx`)."""
    flags = "".join(f",\n           coalesce({cond}, false) AS m{k}" for k, cond in enumerate(steps, 1))
    ignored = " OR ".join(f"kind = '{x}' OR name = '{x}'" for x in ignoring) or "false"
    return f"""WITH raw AS (
    SELECT session, epoch_us(time) AS t,
           row_number() OVER (PARTITION BY session ORDER BY epoch_us(time), seq) AS rn,
           ({ignored}) AS ignored{flags}
    FROM read_parquet(?) {where}
),
ev AS (
    SELECT *, min(CASE WHEN NOT ignored THEN rn END)
                  OVER (PARTITION BY session ORDER BY rn ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS nx
    FROM raw
),"""


def inside(later, first, within_us):
    """The window's condition on two times, or nothing without `within`."""
    return f" AND {later} - {first} <= {within_us}" if within_us else ""


def step_chains_sql(strict, count, within_us):
    """`chains` of the ordered and strict modes: one chain per event matching step 1, each later step the first
    later match (ordered) or the next event not ignored when it matches (strict)."""
    parts = ["\nc1 AS (SELECT session, rn AS p1, t AS t1, nx AS n1 FROM ev WHERE m1),"]
    for k in range(2, count + 1):
        kept = ", ".join(["c.session", "c.p1", "c.t1"] + [f"c.p{j}, c.t{j}" for j in range(2, k)])
        if strict:
            parts.append(f"""
c{k} AS (
    SELECT {kept}, e.rn AS p{k}, e.t AS t{k}, e.nx AS n{k}
    FROM c{k - 1} c LEFT JOIN ev e
        ON e.session = c.session AND e.rn = c.n{k - 1} AND e.m{k}{inside('e.t', 'c.t1', within_us)}
),""")
        else:
            parts.append(f"""
c{k} AS (
    SELECT {kept}, min(e.rn) AS p{k}, arg_min(e.t, e.rn) AS t{k}
    FROM c{k - 1} c LEFT JOIN ev e
        ON e.session = c.session AND e.m{k} AND e.rn > c.p{k - 1}{inside('e.t', 'c.t1', within_us)}
    GROUP BY ALL
),""")
    reached = " + ".join(["1"] + [f"(p{k} IS NOT NULL)::INTEGER" for k in range(2, count + 1)])
    times = ", ".join(["0::BIGINT"] + [f"t{k} - t1" for k in range(2, count + 1)])
    parts.append(f"\nchains AS (SELECT session, p1, {reached} AS lv, [{times}] AS times FROM c{count}),")
    return "".join(parts)


def any_chains_sql(count, within_us):
    """`chains` of the any mode: one per event matching some step, from the first matches of each step in the
    window it starts."""
    anchors = " OR ".join(f"m{k}" for k in range(1, count + 1))
    firsts = ", ".join(f"min(e.t) FILTER (WHERE e.m{k}) AS f{k}" for k in range(1, count + 1))
    present = [" AND ".join(f"f{j} IS NOT NULL" for j in range(1, k + 1)) for k in range(1, count + 1)]
    level = " + ".join(f"({p})::INTEGER" for p in present)
    times = ", ".join(["0::BIGINT"] + [f"greatest({', '.join(f'f{j}' for j in range(1, k + 1))}) - f1"
                                       for k in range(2, count + 1)])
    return f"""
anchors AS (SELECT session, rn AS p1, t AS ta FROM ev WHERE {anchors}),
win AS (
    SELECT a.session, a.p1, {firsts}
    FROM anchors a JOIN ev e ON e.session = a.session AND e.t >= a.ta{inside('e.t', 'a.ta', within_us)}
    GROUP BY a.session, a.p1
),
chains AS (SELECT session, p1, {level} AS lv, [{times}] AS times FROM win),"""


Case = namedtuple("Case", "key title query sql params columns")


def same_number(a, b, tolerance):
    if a is None or b is None:
        return a is None and b is None
    return abs(float(a) - float(b)) <= tolerance * max(1.0, abs(float(a)))


def duckdb_agrees(bw_rows, dk_rows, columns):
    """Boardwalk's JSON rows against DuckDB's tuples, column by column (`columns`: Boardwalk's names, in the SQL's
    order); numbers to 1e-6 relative (times are sums of microseconds). None when they agree, else the first
    difference."""
    if len(bw_rows) != len(dk_rows):
        return f"{len(bw_rows)} rows against {len(dk_rows)}"
    for i, (bw, dk) in enumerate(zip(bw_rows, dk_rows)):
        for name, value in zip(columns, dk):
            mine = bw.get(name)
            if isinstance(value, (int, float)) or isinstance(mine, (int, float)):
                if not same_number(mine, value, 1e-6):
                    return f"row {i}, {name}: {mine!r} against {value!r}"
            elif mine != value:
                return f"row {i}, {name}: {mine!r} against {value!r}"
    return None


CLICKHOUSE_TIME = re.compile(r"^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)$")


def clickhouse_cell(value, answer):
    """One ClickHouse JSON cell as Boardwalk's JSON prints it: an answer column holds the answer's JSON text; a
    timestamp is `YYYY-MM-DD HH:MM:SS.ffffff` in UTC, which Boardwalk prints `YYYY-MM-DDTHH:MM:SS.ffffffZ`."""
    if answer and isinstance(value, str):
        return json.loads(value)
    if isinstance(value, str):
        match = CLICKHOUSE_TIME.match(value)
        if match:
            return f"{match.group(1)}T{match.group(2)}Z"
    return value


def clickhouse_agrees(bw_rows, ch_result, answer_columns):
    """Boardwalk's JSON rows against ClickHouse's JSON result: the same column names in the same order, the same
    rows in the same order, numbers to 1e-9 relative (scripts/clickhouse_diff.py's tolerance). None when they
    agree, else the first difference."""
    names = [column["name"] for column in ch_result["meta"]]
    rows = ch_result["data"]
    if bw_rows and list(bw_rows[0].keys()) != names:
        return f"columns {list(bw_rows[0].keys())} against {names}"
    if len(bw_rows) != len(rows):
        return f"{len(bw_rows)} rows against {len(rows)}"
    for i, (bw, ch) in enumerate(zip(bw_rows, rows)):
        for name in names:
            mine, theirs = bw.get(name), clickhouse_cell(ch[name], name in answer_columns)
            if isinstance(mine, str) and theirs == f"{mine}T00:00:00.000000Z":
                theirs = mine  # a day bucket: Boardwalk prints the day, ClickHouse the instant it starts
            if isinstance(mine, (int, float)) or isinstance(theirs, (int, float)):
                same = same_number(mine, theirs, 1e-9)
            else:
                same = mine == theirs
            if not same:
                return f"row {i}, {name}: {mine!r} against {theirs!r}"
    return None


def run(cmd, **kwargs):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kwargs)


def thread_flags(threads):
    """`boardwalk query`'s thread option: 0 means the default, every core."""
    return ["--threads", str(threads)] if threads else []


def thread_label(threads):
    return str(threads) if threads else f"all ({os.cpu_count()})"


# `boardwalk query --timing` on stderr: "(N rows, 12.345 ms, … read; store opened in 0.412 ms)".
# Older builds printed the time rounded, in µs, ms or s, and no open time: accepted too.
TIMING = re.compile(r"\(\d+ rows?, ([0-9.]+) (µs|ms|s), .* read(?:; store opened in ([0-9.]+) ms)?\)")
UNIT = {"µs": 1e-6, "ms": 1e-3, "s": 1.0}


def timed_query(bw, query, threads):
    """Runs `boardwalk query --timing …`: (stdout, the query's own seconds, the store's open seconds)."""
    cmd = bw + ["query", "--timing", "--format", "json"] + thread_flags(threads) + [query]
    done = run(cmd)
    match = TIMING.search(done.stderr)
    if not match:
        sys.exit(f"no timing line in the stderr of {cmd}: {done.stderr!r}")
    return done.stdout, float(match.group(1)) * UNIT[match.group(2)], float(match.group(3) or "nan") / 1e3


def boardwalk_repeated(bw, query, threads, runs):
    """The query's best own time over `runs` repetitions after a first one, all in one `boardwalk repl` process:
    the first run pays for the process's first touch of the store's pages and of its own code and metadata, the
    later ones do not (like DuckDB's repeated runs on one open connection)."""
    script = (f".threads {threads}\n" if threads else "") + ".timing on\n.format json\n" + (query + "\n") * (runs + 1)
    done = subprocess.run(bw + ["repl"], input=script, check=True, capture_output=True, text=True)
    times = [float(m.group(1)) * UNIT[m.group(2)] for m in TIMING.finditer(done.stderr)]
    if len(times) != runs + 1:
        sys.exit(f"expected {runs + 1} timing lines from boardwalk repl, got {len(times)}: {done.stderr!r}")
    return min(times[1:])


def boardwalk_rows(bw, query, threads):
    return json.loads(run(bw + ["query", "--format", "json"] + thread_flags(threads) + [query]).stdout)


def clickhouse_sql(boardwalk, query):
    """The engine's own ClickHouse translation of `query` (`boardwalk query --sql clickhouse`), and the names of
    its answer columns (which hold an answer's JSON text)."""
    done = subprocess.run([boardwalk, "query", "--sql", "clickhouse", query], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"no ClickHouse translation of {query}:\n{done.stderr}")
    sql = done.stdout
    answers = set()
    if sql.startswith("-- answer columns (JSON text): "):
        answers = set(json.loads(sql.splitlines()[0].split(": ", 1)[1]))
    return sql, answers


def with_threads(sql, threads):
    """The SELECT with its settings: integers as JSON numbers, and at most `threads` threads (0: the default)."""
    settings = ["output_format_json_quote_64bit_integers = 0"] + ([f"max_threads = {threads}"] if threads else [])
    return sql.rstrip().rstrip(";") + "\nSETTINGS " + ", ".join(settings)


# chdb allows one session on a directory at a time, across processes: every use of the table is a process of its
# own (this one never opens it), which is also what a first query in a new process needs.
CHDB_LOAD = """
import sys
from chdb import session
s = session.Session(sys.argv[1])
s.query(open(sys.argv[2]).read())
s.query(f"INSERT INTO boardwalk_events FROM INFILE '{sys.argv[3]}' FORMAT JSONEachRow")
print(s.query("SELECT count() FROM boardwalk_events", "CSV").data().strip())
s.close()
"""

# A query in a new chdb session, timed like DuckDB's: from the open session to the result's data, once and then
# `repeats` times more; prints the times and the first result.
CHDB_QUERY = """
import json, sys, time
from chdb import session
path, sql, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = session.Session(path)
times, result = [], None
for _ in range(1 + repeats):
    t0 = time.perf_counter()
    data = s.query(sql, "JSON").data()
    times.append(time.perf_counter() - t0)
    result = result or data
s.close()
print(json.dumps({"times": times, "result": json.loads(result)}))
"""


def clickhouse_query(path, sql, threads, repeats=0):
    """Runs the SQL in a new process on the chdb table: (seconds of each run, the first run's JSON result)."""
    done = run([sys.executable, "-c", CHDB_QUERY, path, with_threads(sql, threads), str(repeats)])
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["times"], report["result"]


def load_clickhouse(boardwalk, bw, path, work):
    """Loads the store's events into a chdb MergeTree table at `path` (the DDL of `export --format clickhouse
    --schema`, ORDER BY the store's key): the number of rows loaded."""
    rows, ddl = os.path.join(work, "rows.jsonl"), os.path.join(work, "schema.sql")
    with open(rows, "w") as out:
        subprocess.run(bw + ["export", "--format", "clickhouse"], check=True, stdout=out, stderr=subprocess.DEVNULL)
    with open(ddl, "w") as out:
        subprocess.run([boardwalk, "export", "--format", "clickhouse", "--schema"], check=True, stdout=out)
    shutil.rmtree(path, ignore_errors=True)
    loaded = int(run([sys.executable, "-c", CHDB_LOAD, path, ddl, rows]).stdout.strip().splitlines()[-1])
    os.remove(rows)
    return loaded


# DuckDB's first query in a fresh process, timed like `boardwalk query --timing`: from an open connection (the
# process, the module and the connection are not counted) to the rows fetched. Threads 0: DuckDB's default.
DUCKDB_FIRST = """
import duckdb, json, sys, time
sql, params, threads = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
con = duckdb.connect()
if threads:
    con.execute(f"SET threads = {threads}")
con.execute("SET enable_progress_bar = false")
t0 = time.perf_counter()
con.execute(sql, params).fetchall()
print(time.perf_counter() - t0)
"""


def duckdb_first_query(sql, params, threads):
    """DuckDB's first query in a new process (seconds): the counterpart of boardwalk's in-process time."""
    done = run([sys.executable, "-c", DUCKDB_FIRST, sql, json.dumps(params), str(threads)])
    # The last line: anything DuckDB writes to stdout before it is not the time.
    return float(done.stdout.strip().splitlines()[-1])


def duckdb_threads(con, threads):
    con.execute(f"SET threads = {threads}" if threads else "RESET threads")


def best_of(runs, fn):
    times = []
    result = None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


KEYS = ["whole", "busiest", "median", "cohort", "names", "completions", "onboardings", "variations", "ordered",
        "strict", "ignoring", "any", "dwell", "timerange", "events", "sessionprop", "funnelby", "bucket", "nested"]


def make_cases(con, parquet):
    """The questions, each as (key, title, Boardwalk's query, DuckDB's SQL, its parameters after the Parquet file,
    the Boardwalk columns DuckDB's SQL gives, in order), and the number of onboardings."""
    by_size = [row[0] for row in con.execute("""
        SELECT onboarding FROM read_parquet(?) WHERE onboarding IS NOT NULL
        GROUP BY onboarding ORDER BY count(DISTINCT session) DESC, onboarding""", [parquet]).fetchall()]
    # The generator's onboardings are far from equal: the busiest holds about a fifth of the sessions of 50.
    # The median one is what "one onboarding of 50" usually means.
    busiest, middle = by_size[0], by_size[len(by_size) // 2]
    # Events of the onboarding (row groups pruned by the sort), plus its sessions' events without meta
    # (errors outside the page), which still count for a session's start.
    one = ("WHERE onboarding = ? OR (onboarding IS NULL AND session IN "
           "(SELECT session FROM read_parquet(?) WHERE onboarding = ?))")
    # A recent cohort: sessions whose first event (any event, with or without meta) is at or after the time by
    # which 85 % of the sessions had started, cut to a whole second so every engine gets the same instant.
    cut = int(con.execute("""
        SELECT floor(quantile_disc(t0, 0.85) / 1000000) FROM
        (SELECT min(epoch_us(time)) AS t0 FROM read_parquet(?) WHERE session IS NOT NULL GROUP BY session)""",
        [parquet]).fetchone()[0])
    cohort = ("WHERE session IN (SELECT session FROM read_parquet(?) GROUP BY session "
              "HAVING min(epoch_us(time)) >= CAST(? AS BIGINT) * 1000000)")
    # The second quarter of the store's time span, in whole seconds.
    first, last = con.execute("SELECT min(epoch_us(time)), max(epoch_us(time)) FROM read_parquet(?)",
                              [parquet]).fetchone()
    since, until = (int((first + (last - first) * share) // 1000000) for share in (0.25, 0.5))

    def instant(seconds):
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))

    funnel_columns = ["step", "sessions", "median_time"]
    custom_columns = ["step", "sessions", "mean_time", "median_time", "p90_time"]
    screen_events = f'events | where onboarding == "{busiest}" and name == "screen_presented"'
    of_busiest = f'sessions | where onboarding == "{busiest}" | funnel '
    paywall_steps = "screen_presented(screen == 0), screen_completed(screen == 2), open_paywall within 30m mode "
    paywall_sql = [step_sql("screen_presented", 0), step_sql("screen_completed", 2), step_sql("open_paywall")]
    sdk_same_time = ["state_updated", "second_screen_presented", "products_screen_presented"]
    screen_steps = [step_sql("screen_presented", 1), step_sql("screen_completed", 1), step_sql("screen_presented", 2)]
    one_params = [busiest, parquet, busiest]
    cases = [
        Case("whole", "funnel over the whole store", "sessions | funnel", FUNNEL_SQL.format(where=""), [],
             funnel_columns),
        Case("busiest", f"funnel of the busiest of {len(by_size)}", of_busiest.rstrip(),
             FUNNEL_SQL.format(where=one), one_params, funnel_columns),
        Case("median", f"funnel of the median of {len(by_size)}", f'sessions | where onboarding == "{middle}" | funnel',
             FUNNEL_SQL.format(where=one), [middle, parquet, middle], funnel_columns),
        Case("cohort", "funnel of the latest 15 % started", f"sessions | where started >= @{instant(cut)} | funnel",
             FUNNEL_SQL.format(where=cohort), [parquet, cut], funnel_columns),
        Case("names", "analytics events by name", 'events | where kind == "analytics" | count by name', NAMES_SQL,
             [], ["name", "count"]),
        Case("completions", "completions by variation",
             'events | where name == "onboarding_completed" | count by variation', COMPLETIONS_SQL, [],
             ["variation", "count"]),
        Case("onboardings", "sessions by onboarding", "sessions | count by onboarding", ONBOARDINGS_SQL, [],
             ["onboarding", "count"]),
        Case("variations", "completion rate by variation", "sessions | stats count(), rate(completed) by variation",
             VARIATIONS_SQL, [], ["variation", "count()", "rate(completed)"]),
        Case("ordered", "ordered funnel of the busiest", of_busiest + paywall_steps + "ordered",
             custom_funnel_sql(paywall_sql, "ordered", 1800 * 10**6, where=one), one_params, custom_columns),
        Case("strict", "strict funnel of the busiest", of_busiest + paywall_steps + "strict",
             custom_funnel_sql(paywall_sql, "strict", 1800 * 10**6, where=one), one_params, custom_columns),
        Case("ignoring", "... strict, ignoring SDK events",
             of_busiest + "screen_presented(screen == 1), screen_completed(screen == 1), screen_presented(screen == 2) "
             f"within 30m mode strict ignoring ({', '.join(sdk_same_time)})",
             custom_funnel_sql(screen_steps, "strict", 1800 * 10**6, sdk_same_time, where=one), one_params,
             custom_columns),
        Case("any", "any-order funnel of the busiest", of_busiest + paywall_steps + "any",
             custom_funnel_sql(paywall_sql, "any", 1800 * 10**6, where=one), one_params, custom_columns),
        Case("dwell", "dwell by screen", 'events | where name == "screen_presented" | stats p50(dwell), p90(dwell) '
             "by screen", DWELL_SQL, [], ["screen", "p50(dwell)", "p90(dwell)", "censored"]),
        Case("timerange", "events in a time range",
             f"events | where time >= @{instant(since)} and time < @{instant(until)} | count",
             TIME_RANGE_SQL, [since, until], ["count"]),
        Case("events", "screens of the busiest", screen_events + " | count by screen", EVENTS_SQL, [busiest],
             ["screen", "count"]),
        Case("sessionprop", "... of its completed sessions", screen_events + " and session.completed | count by screen",
             SESSION_PROPERTY_SQL, [busiest, parquet], ["screen", "count"]),
        Case("funnelby", "funnel of the busiest by answer", of_busiest + 'by answer("level")',
             FUNNEL_BY_ANSWER_SQL.format(where=one), one_params,
             ['answer("level")', "step", "sessions", "median_time"]),
        Case("bucket", "sessions by day", "sessions | count by day(started)", DAY_SQL, [], ["day(started)", "count"]),
        Case("nested", "profiles that came back", "sessions | count by profile | where count > 1 | count",
             NESTED_SQL, [], ["count"]),
    ]
    assert [case.key for case in cases] == KEYS
    return cases, len(by_size)


def check_agreement(case, bw, boardwalk, con, parquet, chdb_path, settings):
    """Stops the script unless Boardwalk, DuckDB and ClickHouse give the same rows for the case at every thread
    setting. Returns the number of Boardwalk's rows."""
    sql, answers = clickhouse_sql(boardwalk, case.query)
    for threads in settings:
        bw_rows = boardwalk_rows(bw, case.query, threads)
        duckdb_threads(con, threads)
        dk_rows = con.execute(case.sql, [parquet] + case.params).fetchall()
        _, ch_result = clickhouse_query(chdb_path, sql, threads)
        for peer, difference, rows in [("DuckDB", duckdb_agrees(bw_rows, dk_rows, case.columns), dk_rows),
                                       ("ClickHouse", clickhouse_agrees(bw_rows, ch_result, answers),
                                        ch_result["data"])]:
            if difference:
                sys.exit(f"{case.title}: Boardwalk and {peer} differ at threads {thread_label(threads)}: "
                         f"{difference}\n{case.query}\nBoardwalk: {bw_rows[:20]}\n{peer}: {rows[:20]}")
    return len(bw_rows)


def time_case(case, threads, bw, boardwalk, con, parquet, chdb_path, runs, paired):
    """Times one question at one thread setting in the three engines (seconds, best of `runs`)."""
    params = [parquet] + case.params
    sql = clickhouse_sql(boardwalk, case.query)[0]
    command, _ = best_of(runs, lambda: timed_query(bw, case.query, threads))
    # In process: the best of the query's own times (separate runs, so the process timing is untouched).
    inner = [timed_query(bw, case.query, threads) for _ in range(runs)]
    duckdb_threads(con, threads)
    dk_repeated, _ = best_of(runs, lambda: con.execute(case.sql, params).fetchall())
    # One chdb process gives a first time and the repeated ones; the others a first time each.
    ch_times, _ = clickhouse_query(chdb_path, sql, threads, repeats=runs)
    ch_firsts = [ch_times[0]] + [clickhouse_query(chdb_path, sql, threads)[0][0] for _ in range(runs - 1)]
    result = {
        "query": case.title, "key": case.key, "boardwalk_query": case.query, "threads": threads,
        "boardwalk_command_seconds": command,
        "boardwalk_first_query_seconds": min(t for _, t, _ in inner),
        "boardwalk_open_seconds": min(o for _, _, o in inner),
        "boardwalk_repeated_seconds": boardwalk_repeated(bw, case.query, threads, runs),
        "duckdb_first_query_seconds": min(duckdb_first_query(case.sql, params, threads) for _ in range(runs)),
        "duckdb_repeated_seconds": dk_repeated,
        "clickhouse_first_query_seconds": min(ch_firsts),
        "clickhouse_repeated_seconds": min(ch_times[1:]),
    }
    result["paired_first_query_ratios"] = paired_ratios(case, threads, bw, sql, params, chdb_path, paired)
    return result


def paired_ratios(case, threads, bw, sql, params, chdb_path, rounds):
    """`rounds` rounds of the three first queries back to back, Boardwalk first in even rounds and last in odd
    ones: each round's peer / Boardwalk ratio, by peer."""
    ratios = {"duckdb": [], "clickhouse": []}
    for i in range(rounds):
        if i % 2 == 0:
            _, mine, _ = timed_query(bw, case.query, threads)
        dk = duckdb_first_query(case.sql, params, threads)
        ch = clickhouse_query(chdb_path, sql, threads)[0][0]
        if i % 2 == 1:
            _, mine, _ = timed_query(bw, case.query, threads)
        ratios["duckdb"].append(dk / mine)
        ratios["clickhouse"].append(ch / mine)
    return ratios


def milliseconds(seconds):
    return f"{seconds * 1e3:,.1f}".replace(",", " ")


def table_row(r):
    """One timed question at one thread setting as a row of the Markdown table."""
    bw_first, bw_repeated = r["boardwalk_first_query_seconds"], r["boardwalk_repeated_seconds"]
    cells = [r["query"], thread_label(r["threads"]),
             f"{milliseconds(bw_first)} / {milliseconds(bw_repeated)} / "
             f"{milliseconds(r['boardwalk_command_seconds'])}"]
    for peer in ["duckdb", "clickhouse"]:
        first, repeated = r[f"{peer}_first_query_seconds"], r[f"{peer}_repeated_seconds"]
        cells.append(f"{milliseconds(first)} / {milliseconds(repeated)}")
        cells.append(f"{first / bw_first:.2f}x / {repeated / bw_repeated:.2f}x")
    return "| " + " | ".join(cells) + " |"


def print_table(report):
    """The report as a Markdown table: one row per question and thread setting."""
    print(f"{report['sessions']} sessions over {report['onboardings']} onboardings, {report['events']} events; "
          f"DuckDB {report['duckdb_version']} over Parquet and chdb {report['chdb_version']} over a MergeTree table, "
          f"both ordered by (onboarding, screen, time); {os.cpu_count()} cores; best of {report['runs']}; "
          f"Boardwalk's store {report['boardwalk_store']}")
    print(f"boardwalk process start-up (boardwalk --version): {milliseconds(report['boardwalk_startup_seconds'])} ms, "
          "included in its command times")
    print("Times in ms: first query in a new process / repeated in one process; Boardwalk's command is the whole "
          "`boardwalk query` process. Ratios: the peer's time / Boardwalk's, first / repeated.")
    print()
    print("| question | threads | Boardwalk first / repeated / command | DuckDB first / repeated | ratio "
          "| ClickHouse first / repeated | ratio |")
    print("|---|---|---|---|---|---|---|")
    for r in report["results"]:
        print(table_row(r))
    for r in report["results"]:
        for peer, ratios in r["paired_first_query_ratios"].items():
            if ratios:
                print(f"{r['query']} (threads: {thread_label(r['threads'])}), {peer}, paired first queries, "
                      f"{len(ratios)} rounds: median ratio {median(ratios):.2f}x "
                      f"({min(ratios):.2f}–{max(ratios):.2f}x)")


def prepare(args, work):
    """Builds (or, with --reuse, finds) the store, the Parquet file and the ClickHouse table in `work`: the
    store's path, the Parquet file's, the chdb directory's, and the ingest's last line (None when reused)."""
    corpus, store = os.path.join(work, "corpus.ndjson"), os.path.join(work, "store")
    csv, parquet, chdb_path = (os.path.join(work, name) for name in ("events.csv", "events.parquet", "chdb"))
    if args.reuse and all(os.path.exists(p) for p in (store, parquet, chdb_path)):
        return store, parquet, chdb_path, None
    shutil.rmtree(store, ignore_errors=True)
    bw = [args.boardwalk, "--db", store]
    with open(corpus, "w") as out:
        subprocess.run([args.boardwalk, "generate", "--sessions", str(args.sessions), "--seed", str(args.seed),
                        "--onboardings", str(args.onboardings)], check=True, stdout=out)
    ingest = run(bw + ["ingest", corpus]).stdout.strip()
    # The corpus, CSV and JSON rows are only steps to the store, the Parquet file and the table.
    os.remove(corpus)
    with open(csv, "w") as out:
        subprocess.run(bw + ["export", "--format", "csv"], check=True, stdout=out, stderr=subprocess.DEVNULL)
    duckdb.connect().execute(f"""
        COPY (SELECT * FROM read_csv(?, header = true, auto_detect = true) ORDER BY onboarding, screen, time, seq)
        TO '{parquet}' (FORMAT parquet)""", [csv])
    os.remove(csv)
    load_clickhouse(args.boardwalk, bw, chdb_path, work)
    return store, parquet, chdb_path, ingest.splitlines()[-1] if ingest else ""


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--onboardings", type=int, default=50, help="onboardings the sessions are drawn from")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse the store, Parquet file and ClickHouse table already in --workdir "
                             "(same --sessions, --seed, --onboardings)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", choices=["1", "all", "both"], default="both",
                        help="time every engine at one thread, at its default (every core), or both (default)")
    parser.add_argument("--boardwalk", default=".build/release/boardwalk", help="the boardwalk executable")
    parser.add_argument("--workdir", default=None,
                        help="where the corpus, store, Parquet file and table go (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--compacted", action="store_true",
                        help="query a compacted copy of the store (`boardwalk backup`, made once in the work "
                             "directory) instead of the store as ingested: its pages are in key order, so an "
                             "onboarding's blocks are neighbours and a first query takes fewer page faults")
    parser.add_argument("--only", choices=KEYS, action="append",
                        help="run only this question (repeatable; default: all)")
    parser.add_argument("--paired", type=int, default=0, metavar="N",
                        help="also time N rounds of the first queries back to back (which engine goes first "
                             "alternates) and report the median of the rounds' ratios: on a noisy host, a ratio taken "
                             "within one round is steadier than one of two bests taken minutes apart")
    return parser.parse_args()


def main():
    args = parse_arguments()
    if not os.access(args.boardwalk, os.X_OK):
        sys.exit(f"{args.boardwalk} not found: swift build -c release --static-swift-stdlib --product boardwalk")
    settings = {"1": [1], "all": [0], "both": [1, 0]}[args.threads]
    work = args.workdir or tempfile.mkdtemp(prefix="boardwalk-compare-")
    os.makedirs(work, exist_ok=True)
    try:
        store, parquet, chdb_path, ingest = prepare(args, work)
        bw = [args.boardwalk, "--db", store]
        if args.compacted:
            compacted = os.path.join(work, "store-compacted")
            if not os.path.isdir(compacted):
                run(bw + ["backup", compacted])
            bw = [args.boardwalk, "--db", compacted]
        con = duckdb.connect()
        con.execute("SET enable_progress_bar = false")
        events = con.execute("SELECT count(*) FROM read_parquet(?)", [parquet]).fetchone()[0]
        cases, onboardings = make_cases(con, parquet)
        if args.only:
            cases = [case for case in cases if case.key in args.only]
        # Equal answers first: a question whose rows differ in any engine stops the script before anything is timed.
        rows = {case.key: check_agreement(case, bw, args.boardwalk, con, parquet, chdb_path, settings)
                for case in cases}
        startup, _ = best_of(args.runs, lambda: run([args.boardwalk, "--version"]))
        results = []
        for case in cases:
            for threads in settings:
                result = time_case(case, threads, bw, args.boardwalk, con, parquet, chdb_path, args.runs, args.paired)
                result["rows"] = rows[case.key]
                results.append(result)
                # Each row as soon as it is timed (stderr): a peer that fails later (out of memory at 1 M sessions)
                # leaves the rows timed before it.
                print(table_row(result), file=sys.stderr, flush=True)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)

    report = {"sessions": args.sessions, "events": events, "onboardings": args.onboardings,
              "duckdb_version": duckdb.__version__, "chdb_version": chdb.__version__, "runs": args.runs,
              "boardwalk_startup_seconds": startup, "results_agree": True,
              "boardwalk_store": "compacted copy" if args.compacted else "as ingested",
              "ingest": ingest or "reused", "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)


if __name__ == "__main__":
    main()
