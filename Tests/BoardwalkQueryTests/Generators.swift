import BoardwalkGenerator
import BoardwalkModel

@testable import BoardwalkQuery

/// Seeded event sets shaped like onboarding sessions, with the awkward cases the semantics doc pins: equal
/// timestamps, events arriving out of time order, back-navigation, sessions without ids (some separated by
/// exactly 30 minutes), empty `element_id`/`reply`, repeated and multi-select answers, several outcomes in
/// one session; plus a few arbitrary events from ``RandomEvents``.
struct SessionGenerator {
    var rng: SplitMix64
    /// The earliest instant a session starts at; sessions start within two days after it.
    var start: Int64

    init(seed: UInt64, start: Int64 = base) {
        rng = SplitMix64(seed: seed)
        self.start = start
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...items.count - 1)] }

    mutating func events() -> [Event] {
        var out: [Event] = []
        let sessionCount = int(0...14)
        for s in 0..<sessionCount {
            let onboarding = pick(["onb_1", "onb_1", "onb_2", "onb_3"])
            let total = int(2...5)
            let profile: String? = chance(0.8) ? pick(["p1", "p2", "p3"]) : nil
            let id: String? = chance(0.75) ? "s\(s)" : (chance(0.2) ? "" : nil)
            let variation: String? = chance(0.7) ? pick(["a", "b"]) : nil
            var t = start + Int64(int(0...2 * 24 * 60)) * minute
            var screen = 0
            func make(_ payload: Payload, placed: Bool = true) -> Event {
                Event(
                    time: Timestamp(microseconds: t), session: id, profile: profile, variation: variation,
                    meta: placed
                        ? Meta(
                            // Mostly one client id per screen index; variation b's sessions see another at odd
                            // times (a screen's two client ids, and ties between them).
                            onboardingID: onboarding,
                            screenClientID: variation == "b" && t / second % 3 == 1 ? "c\(screen)b" : "c\(screen)",
                            screenIndex: screen,
                            totalScreens: total) : nil,
                    payload: payload)
            }
            if chance(0.5) { out.append(make(.onboardingLoaded)) }
            if chance(0.8) { out.append(make(.analytics(.onboardingStarted))) }
            let steps = int(1...9)
            for _ in 0..<steps {
                // Equal timestamps, small gaps, and now and then exactly 30 minutes of silence.
                t +=
                    chance(0.2)
                    ? 0 : (chance(0.05) ? 30 * minute : Int64(chance(0.5) ? int(1...8) * 15 : int(1...90)) * second)
                switch int(0...13) {
                case 0, 1, 2:
                    if chance(0.25) { screen = max(0, screen - 1) } else if screen < total - 1 { screen += 1 }
                    out.append(make(.analytics(.screenPresented)))
                case 3:
                    out.append(
                        make(
                            .analytics(
                                .screenCompleted(
                                    elementID: pick([nil, "", "experience", "btn"]),
                                    reply: pick([nil, "", "yes", "no"])))))
                case 4:
                    out.append(
                        make(
                            .stateUpdated(
                                StateUpdate(
                                    elementID: "experience",
                                    value: .select(
                                        Choice(
                                            id: "x", value: pick(["beginner", "amateur", "pro"]),
                                            label: pick(["Beginner", "Pro"])))))))
                case 5:
                    let options = ["music", "sports", "art"].filter { _ in chance(0.5) }
                    out.append(
                        make(
                            .stateUpdated(
                                StateUpdate(
                                    elementID: "interests",
                                    value: .multiSelect(
                                        options.map { Choice(id: $0, value: $0, label: $0.uppercased()) })))))
                case 6:
                    out.append(
                        make(.stateUpdated(StateUpdate(elementID: "age", value: .input(.number(Double(int(15...60)))))))
                    )
                case 7:
                    out.append(
                        make(
                            .stateUpdated(
                                StateUpdate(
                                    elementID: "birthday",
                                    // Whole dates (two years apart around 2000), a day off the calendar, and
                                    // partial dates; drawn without the generator beyond the year's chance.
                                    value: .datePicker(
                                        DateParts(
                                            year: chance(0.5) ? (s % 2 == 0 ? 1990 : 2001) : nil, month: 3,
                                            day: out.count % 4 == 0 ? nil : out.count % 4 == 3 ? 32 : 10 + out.count % 4
                                        )
                                    ))))
                    )
                case 8: out.append(make(.openPaywall(actionID: pick(["", "p1"]))))
                case 9: out.append(make(.custom(actionID: "c")))
                case 10: out.append(make(.close(actionID: "x")))
                case 11: out.append(make(.analytics(chance(0.5) ? .onboardingCompleted : .userEmailCollected)))
                case 12:
                    out.append(
                        make(.error(OnboardingError(domain: "webkit", code: 4200, message: "m")), placed: chance(0.5)))
                default: out.append(make(.analytics(.unknown(name: "navigation_failed"))))
                }
            }
        }
        var random = RandomEvents(seed: rng.next())
        for _ in 0..<int(0...2) {
            // Arbitrary values, but few screens: a screen funnel has a row per screen, and the reference sorts slowly.
            var e = random.event()
            if var meta = e.meta {
                meta.totalScreens %= 7
                meta.screenIndex %= 7
                e.meta = meta
            }
            out.append(e)
        }
        // Arrival order is not time order: shuffle a little.
        for i in out.indices where chance(0.1) { out.swapAt(i, int(0...out.count - 1)) }
        return out
    }
}

/// Random queries over the fields, functions, aggregates and stages of the language.
struct QueryGenerator {
    var rng: SplitMix64
    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...items.count - 1)] }

    mutating func eventPredicate(depth: Int = 0) -> String {
        if depth < 2, chance(0.25) {
            let op = pick(["and", "or"])
            return "(\(eventPredicate(depth: depth + 1)) \(op) \(eventPredicate(depth: depth + 1)))"
        }
        if depth < 2, chance(0.08) { return "not \(eventPredicate(depth: depth + 1))" }
        return pick([
            "kind == \"\(pick(["analytics", "state_updated", "open_paywall", "error", "close"]))\"",
            "name == \"\(pick(["screen_presented", "screen_completed", "onboarding_started", "navigation_failed"]))\"",
            "onboarding == \"\(pick(["onb_1", "onb_2", "nope"]))\"",
            "onboarding in [\"onb_1\", \"onb_3\"]",
            "onboarding not in [\"onb_1\"]",
            "screen \(pick([">=", ">", "<", "<=", "==", "!="])) \(int(0...3))",
            "\(int(0...3)) <= screen",
            "time >= @2026-11-02T\(pick(["00", "10", "18"])):00:00Z",
            "time < now() - \(pick(["1d", "12h", "90m"]))",
            "element == \"\(pick(["experience", "interests", "btn"]))\"",
            "value == \"\(pick(["pro", "music", "beginner"]))\"",
            "value in [\"art\", \"amateur\"]",
            "value > 30",
            "reply != \"no\"",
            "dwell > \(pick(["10s", "1m", "0s"]))",
            "variation == \"a\"",
            "session == \"s1\"",
            "session in [\"s\(int(0...4))\", \"s\(int(5...9))\", \"nobody\"]",
            "seq < \(int(0...40))",
            "label == \"PRO\"",
            "screen + 1 > total_screens - 1",
            "reply is absent", "value is present", "dwell is absent", "\(pick(["element", "variation"])) is present",
            "session.completed", "not session.paywall",
            "session.exit == \"\(pick(["closed", "abandoned", "completed"]))\"",
            "session.answer(\"experience\") == \"\(pick(["pro", "beginner"]))\"", "session.did(open_paywall)",
            "session.furthest_screen >= \(int(0...3))", "session.answer(\"interests\") is present",
            "profile == \"\(pick(["p1", "p2", "nobody"]))\"", "profile in [\"p2\", \"p3\"]",
            // Date answers against timestamps, and their year.
            "value \(pick(["<", ">=", "=="])) @\(pick(["2000-01-01", "1990-03-11", "2001-03-12"]))",
            "session.answer(\"birthday\") < @2000-01-01", "year(value) == \(pick(["1990", "2001"]))",
        ])
    }

    mutating func sessionPredicate(depth: Int = 0) -> String {
        if depth < 2, chance(0.25) {
            let op = pick(["and", "or"])
            return "(\(sessionPredicate(depth: depth + 1)) \(op) \(sessionPredicate(depth: depth + 1)))"
        }
        if depth < 2, chance(0.08) { return "not \(sessionPredicate(depth: depth + 1))" }
        return pick([
            "completed", "not paywall", "closed or email_collected",
            "exit == \"\(pick(["abandoned", "paywall", "completed", "error", "closed"]))\"",
            "answer(\"experience\") == \"\(pick(["pro", "beginner"]))\"",
            "answer(\"interests\") == \"music\"",
            "answer(\"age\") >= 30",
            "did(\(pick(["open_paywall", "screen_completed", "state_updated", "\"navigation_failed\""])))",
            "reached(\(int(0...4)))",
            "furthest_screen \(pick([">=", ">", "=="])) \(int(0...3))",
            "duration > \(pick(["1m", "30s", "5m"]))",
            "started >= @2026-11-02", "ended <= @2026-11-02T12:00:00Z", "started > now() - 2d",
            "started \(pick(["<", "<=", "=="])) @2026-11-02T\(pick(["06", "12", "18"])):00:00Z",
            "onboarding == \"\(pick(["onb_1", "onb_2"]))\"",
            "events > \(int(2...6))",
            "variation in [\"a\"]",
            "last_screen < total_screens - 1",
            "session == \"s\(int(0...6))\"",
            "session in [\"s\(int(0...4))\", \"s\(int(5...9))\"]",
            "answer(\"\(pick(["experience", "interests", "age"]))\") is \(pick(["absent", "present"]))",
            "variation is absent",
            "profile == \"\(pick(["p1", "p3", "nobody"]))\"", "profile in [\"p1\", \"p2\"]",
            "answer(\"birthday\") \(pick(["<", ">", "<=", "!="])) @\(pick(["2000-01-01", "1990-03-11", "2001-03-12"]))",
            "year(answer(\"birthday\")\(pick(["", ", \"-05:00\""]))) \(pick(["==", ">"])) 1990",
            "answer(\"birthday\") == \"\(pick(["1990-03-11", "1990-03-32", "????-03-12"]))\"",
        ])
    }

    /// A listing that keeps its first rows (`limit` with no `sort` before it), filtered or not, often by profile:
    /// what the store answers by reading from its earliest events on and stopping, or through `session_names`.
    mutating func limitQuery() -> String {
        let events = chance(0.5)
        var parts = [events ? "events" : "sessions"]
        for _ in 0..<int(0...2) {
            if chance(0.35) {
                parts.append(
                    "where "
                        + pick([
                            "profile == \"\(pick(["p1", "p2", "p3", "nobody"]))\"", "profile in [\"p1\", \"p3\"]",
                            "profile != \"p2\"", "profile is absent",
                        ]))
            } else {
                parts.append("where " + (events ? eventPredicate() : sessionPredicate()))
            }
        }
        if chance(0.5) {
            let columns =
                events
                ? ["time", "seq", "session", "profile", "name", "screen", "onboarding", "value"]
                : ["session", "profile", "started", "events", "exit", "onboarding"]
            var seen = Set<String>()
            let chosen = (0..<int(1...3)).map { _ in pick(columns) }.filter { seen.insert($0).inserted }
            parts.append("select " + chosen.joined(separator: ", "))
        }
        let limit = "limit \(pick([0, 1, 1, 2, 3, 5, 5, 8, 20, 1000]))"
        // `select` after `limit` reads the source's fields as before it.
        if parts.last?.hasPrefix("select") == true, chance(0.4) {
            parts.insert(limit, at: parts.count - 1)
        } else {
            parts.append(limit)
        }
        return parts.joined(separator: " | ")
    }

    /// A screen funnel or a custom-step funnel with random steps, window, mode and breakdown.
    mutating func funnel() -> String {
        let steps = [
            "screen_presented(screen == 0)", "screen_presented(screen == 1)", "screen_presented(screen >= 2)",
            "screen_completed", "state_updated(element == \"experience\")", "open_paywall", "onboarding_completed",
            "close", "custom", "\"navigation_failed\"", "analytics", "state_updated",
            // Predicates the store's folds test on the fields they read without decoding the record.
            "analytics(name != \"screen_completed\" and total_screens >= 3)",
            "screen_completed(onboarding == \"onb_1\" or screen < 2)",
            "screen_presented(time >= @2026-11-01T12:00:00Z and seq > 5)", "custom(kind == \"custom\")",
            // Screen comparisons the folds test on the fields' integers, the literal on either side.
            "screen_completed(2 > screen)", "screen_presented(total_screens != 4)", "analytics(1 <= screen)",
        ]
        if chance(0.2) {
            let keys = [
                "variation", "onboarding", "screen_cid as cid", "answer(\"experience\")", "session.variation", "exit",
            ]
            return "funnel" + (chance(0.3) ? " by \(pick(keys))" : "")
        }
        var text = "funnel " + (0..<int(1...4)).map { _ in pick(steps) }.joined(separator: ", ")
        if chance(0.7) { text += " within \(pick(["0s", "15s", "30s", "45s", "1m", "2m", "10m", "1h"]))" }
        let mode = pick(["", "ordered", "strict", "any"])
        if !mode.isEmpty { text += " mode \(mode)" }
        if mode == "strict", chance(0.6) {
            let ignoring = [
                "state_updated", "state_updated, onboarding_loaded", "analytics", "screen_completed, state_updated",
                "\"navigation_failed\", onboarding_started",
            ]
            text += " ignoring (\(pick(ignoring)))"
        }
        if chance(0.3) {
            text +=
                " by \(pick(["variation", "onboarding", "screen", "value", "answer(\"experience\")", "session.variation", "completed", "session.exit"]))"
        }
        return text
    }

    /// `sessions [| where …] | paths …`, now and then followed by table stages over its rows.
    mutating func pathsQuery() -> String {
        var parts = ["sessions"]
        if chance(0.3) { parts.append("where " + sessionPredicate()) }
        let anchors = [
            "after start", "before end", "after screen_presented(screen == 1)", "before screen_presented(screen >= 2)",
            "after state_updated", "before close", "after open_paywall", "before onboarding_completed",
            "after analytics", "before \"navigation_failed\"", "after screen_completed(reply == \"yes\")",
            "before custom(action == \"c\")",
        ]
        var text = "paths " + pick(anchors)
        if chance(0.8) { text += " depth \(int(1...5))" }
        parts.append(text)
        if chance(0.3) { parts.append(pick(["where sessions >= 2", "limit 3", "sort path", "where share > 0.2"])) }
        return parts.joined(separator: " | ")
    }

    /// `sessions [| where …] | funnel …`.
    mutating func funnelQuery() -> String {
        var parts = ["sessions"]
        if chance(0.3) { parts.append("where " + sessionPredicate()) }
        parts.append(funnel())
        return parts.joined(separator: " | ")
    }

    mutating func query() -> String {
        let events = chance(0.45)
        var parts = [events ? "events" : "sessions"]
        for _ in 0..<int(0...2) { parts.append("where " + (events ? eventPredicate() : sessionPredicate())) }
        let eventKeys = [
            "name", "kind", "screen", "onboarding", "element", "value", "label", "variation", "session", "reply",
            "element_type", "session.exit", "session.answer(\"experience\")", "session.completed", "option",
            "input_type", "error_code", "error_domain",
        ]
        let sessionKeys = [
            "exit", "onboarding", "completed", "answer(\"interests\")", "answer(\"experience\")", "variation",
            "furthest_screen", "profile", "answer(\"birthday\")", "year(answer(\"birthday\"))",
            "month(answer(\"birthday\"))",
        ]
        // Time buckets in UTC, a fixed offset and zones whose clocks change (see `bucketedQuery`).
        let zones = ["", ", \"+05:30\"", ", \"Europe/Berlin\"", ", \"America/New_York\"", ", \"UTC\""]
        var keys = events ? eventKeys : sessionKeys
        if chance(0.3) {
            let unit = pick(["hour", "day", "week", "month"])
            keys.append("\(unit)(\(events ? "time" : pick(["started", "ended"]))\(pick(zones)))")
        }
        // Output column names must differ: a name drawn twice is kept once (the draws stay as they were).
        func distinct(_ names: [String]) -> [String] {
            var seen = Set<String>()
            return names.filter { seen.insert($0).inserted }
        }
        func by() -> String {
            let n = int(0...2)
            if n == 0 { return "" }
            return " by " + distinct((0..<n).map { _ in pick(keys) }).joined(separator: ", ")
        }
        var hasColumns = ["count"]
        switch int(0...(events ? 4 : 5)) {
        case 0:
            parts.append("count" + by())
        case 1:
            let aggregates =
                events
                ? [
                    "count()", "count(reply)", "count_distinct(session)", "sum(screen)", "avg(screen)", "min(time)",
                    "max(screen)",
                    "p50(dwell)", "p90(screen)", "percentile(dwell, 0.25)", "rate(kind == \"analytics\")", "avg(value)",
                    "max(name)",
                    "count_distinct(value)", "p99(value)", "ci(kind == \"close\", 0.99) as closing",
                ]
                : [
                    "count()", "rate(completed)", "p50(duration)", "p90(duration)", "avg(events)",
                    "sum(furthest_screen)",
                    "min(started)", "max(duration)", "count_distinct(answer(\"interests\"))",
                    "count(answer(\"experience\"))",
                    "percentile(duration, 0.75)", "avg(answer(\"age\"))", "p95(answer(\"age\"))", "min(exit)",
                    "ci(completed)", "ci(paywall, 0.8) as pw",
                ]
            let chosen = distinct((0..<int(1...3)).map { _ in pick(aggregates) })
            // `ci(…)` gives two columns, named after `as` or `ci`: the low end's sorts.
            hasColumns = chosen.map { a in
                guard a.hasPrefix("ci(") else { return a }
                return (a.firstRange(of: " as ").map { String(a[$0.upperBound...]) } ?? "ci") + "_low"
            }
            parts.append("stats " + chosen.joined(separator: ", ") + by())
        case 2:
            parts.append("top \(int(1...4)) \(pick(keys))")
        case 3:
            parts.append(
                events
                    ? pick(["histogram screen", "histogram dwell step 30s", "histogram value step 10"])
                    : pick(["histogram duration", "histogram events step 2", "histogram answer(\"age\") step 5"]))
        case 4:
            hasColumns = []
            if chance(0.5) {
                parts.append("select " + distinct((0..<int(1...3)).map { _ in pick(keys) }).joined(separator: ", "))
            }
            if chance(0.5) { parts.append("limit \(int(0...10))") }
        default:
            parts.append(funnel())
            hasColumns = ["sessions", "step"]
        }
        if !hasColumns.isEmpty, chance(0.3) {
            let column = pick(hasColumns)
            parts.append("sort \(column)\(chance(0.5) ? " desc" : "")")
            if chance(0.5) { parts.append("limit \(int(1...5))") }
        }
        if hasColumns == ["count"], parts.last?.hasPrefix("count") == true, chance(0.5) {
            parts += laterStages()
        }
        return parts.joined(separator: " | ")
    }

    /// A reduction by one key and `versus` one of its groups (or one that may be missing).
    mutating func versusQuery() -> String {
        var parts = ["sessions"]
        if chance(0.3) { parts.append("where " + sessionPredicate()) }
        let rates = ["rate(completed)", "rate(paywall) as pw", "rate(did(close))", "rate(furthest_screen >= 2)"]
        switch int(0...4) {
        case 0, 1:
            let chosen = Array(Set((0..<int(1...3)).map { _ in pick(rates) })).sorted()
            let key = pick(["variation", "answer(\"experience\")", "exit", "completed"])
            let baseline =
                switch key {
                case "variation": pick(["\"a\"", "\"b\""])
                case "exit": pick(["\"abandoned\"", "\"completed\""])
                case "completed": pick(["true", "false"])
                default: pick(["\"pro\"", "\"beginner\""])
                }
            parts.append("stats count(), " + chosen.joined(separator: ", ") + " by \(key)")
            parts.append("versus \(baseline)")
        case 2:
            parts[0] = "events"
            parts = [
                "events", "stats rate(kind == \"analytics\"), rate(screen >= 1) as deep by variation", "versus \"b\"",
            ]
        case 3:
            parts += ["count by variation, exit", "stats rate(count > 1) as many by variation", "versus \"a\""]
        default:
            let key = pick(["session.variation", "answer(\"experience\")", "variation"])
            let baseline = key.hasSuffix("variation") ? pick(["\"a\"", "\"b\""]) : "\"pro\""
            let steps = pick([
                "", "onboarding_started, screen_presented(screen == 1), onboarding_completed",
                "screen_presented, state_updated, open_paywall within 1m",
            ])
            parts.append("funnel \(steps)\(steps.isEmpty ? "" : " ")by \(key)")
            parts.append("versus \(baseline)")
        }
        return parts.joined(separator: " | ")
    }

    /// Stages after a `count [by …]`: arithmetic on its column, a filter on it, and a second (or third) reduction
    /// over its rows.
    mutating func laterStages() -> [String] {
        var parts: [String] = []
        if chance(0.4) { parts.append("where count \(pick([">", ">=", "<", "=="])) \(int(0...3))") }
        if chance(0.3) { parts.append("select count, count * 2 + 1 as odd, count / 2 as half") }
        switch int(0...4) {
        case 0: parts.append("count")
        case 1: parts.append("stats p50(count), max(count), sum(count), avg(count)")
        case 2: parts.append("histogram count step \(pick(["1", "2", "5"]))")
        case 3: parts += ["count by count as times", "sort count desc", "limit 3"]
        default: parts += ["top 2 count as times", "where count >= 1", "count"]
        }
        return parts
    }

    /// A query keyed by a time bucket (`count by day(started, "Europe/Berlin")`), for data that straddles clock
    /// changes, with now and then a filter against a bucket of `now()` and a reduction over its rows.
    mutating func bucketedQuery() -> String {
        let events = chance(0.4)
        let unit = pick(["hour", "day", "week", "month"])
        let zone = pick(["", ", \"+05:30\"", ", \"-03:00\"", ", \"Europe/Berlin\"", ", \"America/New_York\""])
        let field = events ? "time" : pick(["started", "ended"])
        var parts = [events ? "events" : "sessions"]
        if chance(0.3) {
            parts.append("where \(field) >= \(pick(["day", "hour"]))(now()\(zone)) - \(pick(["1d", "2d", "36h"]))")
        }
        if chance(0.3) { parts.append("where \(unit)(\(field)\(zone)) != \(unit)(now()\(zone))") }
        let key = "\(unit)(\(field)\(zone))"
        if chance(0.7) {
            parts.append("count by \(key)" + (chance(0.3) ? ", " + (events ? "kind" : "exit") : ""))
            if chance(0.5) { parts += laterStages() }
        } else {
            parts.append("stats min(\(key)) as first, max(\(key)) as last, count()")
            if chance(0.5) { parts.append("select last - first as span, first") }
        }
        return parts.joined(separator: " | ")
    }

    /// An `events` query shaped for the store's cheaper event paths: counts by `onboarding` and `screen` with
    /// filters on those and on `time` and `seq` (counted from block headers, time ranges cutting blocks), and
    /// queries reading only the fields `RecordFields` gives (the lean path); now and then a field that needs
    /// the full record, so that the paths meet. Half the instants compared with `time` are the times of `events`
    /// (exactly, or a microsecond off), so that ranges cut blocks between and at their events.
    mutating func eventPathQuery(_ events: [Event]) -> String {
        func instant() -> String {
            if !events.isEmpty, chance(0.5) {
                return "@" + Timestamp(microseconds: pick(events).time.microseconds &+ Int64(int(-1...1))).iso8601
            }
            return
                "@2026-11-0\(pick(["1", "2", "3"]))T\(pick(["00", "06", "10", "11", "13", "18", "22"])):\(pick(["00", "17", "30", "45"])):00Z"
        }
        func keyCondition() -> String {
            pick([
                "onboarding == \"\(pick(["onb_1", "onb_2", "onb_3", "nope"]))\"",
                "onboarding in [\"onb_1\", \"onb_3\"]",
                "onboarding != \"onb_2\"",
                "screen \(pick([">=", ">", "<", "<=", "==", "!="])) \(int(0...3))",
                "screen + 1 > \(int(1...3))",
                "time \(pick([">=", ">", "<", "<=", "=="])) \(instant())",
                "\(instant()) <= time",
                "time != \(instant())",
                "time > now() - \(pick(["1d", "36h", "90m"]))",
                "seq \(pick(["<", ">=", "!="])) \(int(0...60))",
                "(time >= \(instant()) or screen == \(int(0...2)))",
                "not (time < \(instant()))",
                "time in [\(instant()), \(instant())]",
            ])
        }
        func leanCondition() -> String {
            pick([
                "kind == \"\(pick(["analytics", "state_updated", "open_paywall", "error"]))\"",
                "name == \"\(pick(["screen_presented", "screen_completed", "navigation_failed"]))\"",
                "session == \"s\(int(0...5))\"", "element == \"experience\"", "reply != \"no\"", "variation == \"a\"",
                "total_screens > 3", "profile == \"p1\"", "element_type == \"select\"", "action == \"p1\"",
                "placement == \"x\"",
            ])
        }
        var parts = ["events"]
        let lean = chance(0.4)
        for _ in 0..<int(0...3) {
            var condition = keyCondition()
            if lean && chance(0.5) { condition = leanCondition() }
            if chance(0.3) { condition += " and " + keyCondition() }
            parts.append("where " + condition)
        }
        let reduction: String
        if lean {
            reduction = pick([
                "count by name", "count by kind, screen", "stats count(), count_distinct(session) by onboarding",
                "top 3 element", "select seq, name, session, screen",
                "stats min(time), max(total_screens) by variation",
                "count by reply", "histogram total_screens", "count by action, element_type",
                // Fields only the full record gives: the full path.
                "top 3 value", "count by screen_cid", "stats count_distinct(event_id)",
            ])
        } else {
            reduction = pick([
                "count", "count by onboarding", "count by screen", "count by onboarding, screen",
                "count by screen, onboarding",
                "top \(int(1...3)) onboarding", "top 2 screen", "histogram screen", "histogram screen step 2",
                "count by screen + 1 as next",
            ])
        }
        parts.append(reduction)
        if !reduction.hasPrefix("select"), !reduction.hasPrefix("stats"), chance(0.2) {
            parts.append("sort count desc")
        }
        return parts.joined(separator: " | ")
    }
}
