import BoardwalkModel

extension TypeChecker {
    func predicate(_ expr: Expr, _ scope: Scope, what: String) throws(QueryError) -> Bound {
        let (bound, type) = try expression(expr, scope)
        guard type == .bool else {
            throw fail("\(what) needs a condition; this is \(type.withArticle)", expr.range)
        }
        return bound
    }

    func expression(_ expr: Expr, _ scope: Scope) throws(QueryError) -> (Bound, QueryType) {
        // After a reduction, a column named after an aggregate (`p50(duration)`) is referred to by that text.
        if case .table(let columns) = scope, case .call = expr.kind {
            let written = compactText(expr.range)
            if let index = columns.firstIndex(where: { $0.name == written }) {
                return (.column(index), columns[index].type)
            }
        }
        switch expr.kind {
        case .literal(let literal):
            switch literal {
            case .string(let s): return (.literal(.string(s)), .string)
            case .integer(let i): return (.literal(.integer(i)), .number)
            case .decimal(let d): return (.literal(.number(d)), .number)
            case .bool(let b): return (.literal(.bool(b)), .bool)
            case .duration(let d): return (.literal(.duration(Double(d))), .duration)
            case .time(let t): return (.literal(.time(t)), .time)
            }
        case .name(let name):
            return try field(name, expr.range, scope)
        case .call(let name, let nameRange, let args):
            return try call(name, nameRange, args, expr.range, scope)
        case .list:
            throw fail("a list can only follow `in`", expr.range)
        case .not(let operand):
            return (.not(try predicate(operand, scope, what: "`not`")), .bool)
        case .presence(let operand, let present):
            let (bound, _) = try expression(operand, scope)
            return (present ? .present(bound) : .not(.present(bound)), .bool)
        case .negate(let operand):
            let (bound, type) = try expression(operand, scope)
            guard type == .number || type == .duration else {
                throw fail("cannot negate \(type.withArticle)", expr.range)
            }
            return (.negate(bound), type)
        case .membership(let value, let items, let negated):
            let (bound, type) = try expression(value, scope)
            var bounds: [Bound] = []
            for item in items {
                let (b, t) = try expression(item, scope)
                guard comparable(type, t, ordering: false) else {
                    throw fail("cannot compare \(type.withArticle) with \(t.withArticle)", item.range)
                }
                try checkEnumerated(value, item, equality: true, scope)
                noteAnswerLiteral(bound, b, .equal, item.range)
                bounds.append(b)
            }
            return (.member(bound, bounds, negated: negated), .bool)
        case .binary(let op, let left, let right):
            switch op {
            case .and, .or:
                let l = try predicate(left, scope, what: "`\(op.rawValue)`")
                let r = try predicate(right, scope, what: "`\(op.rawValue)`")
                return (op == .and ? .and(l, r) : .or(l, r), .bool)
            case .equal, .notEqual, .less, .lessEqual, .greater, .greaterEqual:
                let (l, lt) = try expression(left, scope)
                let (r, rt) = try expression(right, scope)
                let ordering = op != .equal && op != .notEqual
                guard comparable(lt, rt, ordering: ordering) else {
                    if ordering, lt == rt {
                        throw fail(
                            "cannot order \(lt == .bool ? "booleans" : "values of this type") with `\(op.rawValue)`",
                            expr.range)
                    }
                    var label =
                        "`\(compact(left.range))` is \(lt.withArticle), `\(compact(right.range))` is \(rt.withArticle)"
                    // `time >= "2026-11-01"`: a timestamp written as a string.
                    if (lt == .time && rt == .string) || (lt == .string && rt == .time) {
                        label += "; write a timestamp as `@2026-11-01` or `@2026-11-01T10:00:00Z`"
                    } else if (lt == .duration && rt == .string) || (lt == .string && rt == .duration) {
                        label += "; write a duration as `30s`, `5m`, `1h` or `7d`"
                    } else if let hint = unitHint(lt, left, rt, right) {
                        label += hint
                    }
                    throw fail("cannot compare \(lt.withArticle) with \(rt.withArticle)", expr.range, label: label)
                }
                try checkEnumerated(left, right, equality: !ordering, scope)
                try checkEnumerated(right, left, equality: !ordering, scope)
                noteAnswerLiteral(l, r, op, right.range)
                noteAnswerLiteral(r, l, op.flipped, left.range)
                return (.compare(op, l, r), .bool)
            case .add, .subtract, .multiply, .divide:
                let (l, lt) = try expression(left, scope)
                let (r, rt) = try expression(right, scope)
                if op == .divide, lt == .duration, rt == .number, case .literal(let n) = right.kind,
                    [Literal.integer(60), .integer(3_600), .integer(86_400), .integer(1_000)].contains(n)
                {
                    // `duration / 60` meant as minutes is a sixtieth of the duration, still shown in seconds.
                    let unit = ["60": "1m", "3600": "1h", "86400": "1d", "1000": "1ms"][compact(right.range)] ?? "1m"
                    notes.items.append(
                        QueryError(
                            .note,
                            "a duration divided by a number is a duration, shown in seconds; for a number of "
                                + "\(unit == "1ms" ? "milliseconds" : unit == "1m" ? "minutes" : unit == "1h" ? "hours" : "days"), "
                                + "divide by a duration: `\(compact(left.range)) / \(unit)`", at: expr.range, in: text))
                }
                guard let type = arithmeticType(op, lt, rt) else {
                    throw fail(
                        "cannot apply `\(op.rawValue)` to \(lt.withArticle) and \(rt.withArticle)", expr.range,
                        label: unitHint(lt, left, rt, right).map { String($0.dropFirst(2)) })
                }
                return (.arithmetic(op, l, r), type)
            }
        }
    }

    /// `day(t)`, `week(t, "Europe/Berlin")`, …: a timestamp and an optional zone, a string literal.
    private func bucket(_ unit: TimeUnit, _ args: [Expr], _ range: Range<Int>, _ scope: Scope) throws(QueryError)
        -> (Bound, QueryType)
    {
        let name = unit.rawValue
        guard args.count == 1 || args.count == 2 else {
            throw fail(
                "`\(name)` takes a timestamp and an optional time zone, found \(args.count) arguments", range,
                label: "e.g. \(name)(started) or \(name)(started, \"Europe/Berlin\")")
        }
        let (value, type) = try expression(args[0], scope)
        // An answer is bucketed when it is a whole date, and absent otherwise.
        guard type == .time || type == .answer else {
            let fields = (scope.isTable ? [] : ["time", "started", "ended"]).filter { field in
                if case .events = scope { field == "time" } else { field != "time" }
            }
            let hint = fields.isEmpty ? "" : "; e.g. \(name)(\(fields.joined(separator: ") or \(name)(")))"
            throw fail(
                "`\(name)` needs a timestamp; `\(compact(args[0].range))` is \(type.withArticle)", args[0].range,
                label: "a bucket is the start of the \(name) holding a time\(hint)")
        }
        if type == .answer, unit == .hour {
            throw fail(
                "`hour` needs a timestamp; `\(compact(args[0].range))` is an answer, and a date answer has no hours",
                args[0].range, label: "day, week and month take a date answer")
        }
        var zone = timeZone
        if args.count == 2 {
            guard case .literal(.string(let text)) = args[1].kind else {
                throw fail(
                    "the time zone of `\(name)` is a string", args[1].range,
                    label: "e.g. \"Europe/Berlin\", \"+03:00\" or \"UTC\"")
            }
            guard let named = BucketZone(text) else { throw unknownZone(text, args[1].range) }
            zone = named
        }
        return (.bucket(unit, value, zone), .time)
    }

    /// `year(t)`, `year(t, "Europe/Berlin")`: the calendar year of a timestamp in a zone (the query's by default),
    /// or of a date answer (absent for other answers), as a number.
    private func year(_ args: [Expr], _ range: Range<Int>, _ scope: Scope) throws(QueryError) -> (Bound, QueryType) {
        guard args.count == 1 || args.count == 2 else {
            throw fail(
                "`year` takes a timestamp or a date answer and an optional time zone, found \(args.count) arguments",
                range, label: "e.g. year(started) or year(answer(\"birthday\"))")
        }
        let (value, type) = try expression(args[0], scope)
        guard type == .time || type == .answer else {
            throw fail(
                "`year` needs a timestamp or a date answer; `\(compact(args[0].range))` is \(type.withArticle)",
                args[0].range, label: "the year of a time, e.g. year(started) or year(answer(\"birthday\"))")
        }
        var zone = timeZone
        if args.count == 2 {
            guard case .literal(.string(let text)) = args[1].kind else {
                throw fail(
                    "the time zone of `year` is a string", args[1].range,
                    label: "e.g. \"Europe/Berlin\", \"+03:00\" or \"UTC\"")
            }
            guard let named = BucketZone(text) else { throw unknownZone(text, args[1].range) }
            zone = named
        }
        return (.year(value, zone), .number)
    }

    /// An unknown time zone, with the closest zone name of the time-zone database when one is close.
    func unknownZone(_ text: String, _ range: Range<Int>) -> QueryError {
        let hint = Suggestions.didYouMean(text, in: BucketZone.knownNames)
        return fail(
            "unknown time zone `\(text)`\(hint)", range,
            label: "a zone of the time-zone database (\"Europe/Berlin\"), an offset (\"+03:00\") or \"UTC\"")
    }

    /// `duration > 5`: a number literal beside a duration was most likely meant as one; the hint names it
    /// with units (`; write a duration with its unit: `5s` or `5m``), or nil.
    private func unitHint(_ lt: QueryType, _ left: Expr, _ rt: QueryType, _ right: Expr) -> String? {
        let number: Expr
        switch (lt, rt) {
        case (.duration, .number): number = right
        case (.number, .duration): number = left
        default: return nil
        }
        let written: String
        switch number.kind {
        case .literal(.integer(let n)): written = String(n)
        case .literal(.decimal): written = compact(number.range)
        default: return nil
        }
        return "; write a duration with its unit: `\(written)s` or `\(written)m`"
    }

    private func comparable(_ a: QueryType, _ b: QueryType, ordering: Bool) -> Bool {
        if ordering, a == .bool || b == .bool { return false }
        if a == b { return true }
        // An answer may be a date (a date picker's whole answer), so it also compares with timestamps.
        if a == .answer { return b == .string || b == .number || b == .bool || b == .time }
        if b == .answer { return a == .string || a == .number || a == .bool || a == .time }
        return false
    }

    private func arithmeticType(_ op: BinaryOperator, _ a: QueryType, _ b: QueryType) -> QueryType? {
        switch (op, a, b) {
        case (.add, .time, .duration), (.add, .duration, .time), (.subtract, .time, .duration): return .time
        case (.subtract, .time, .time): return .duration
        case (.add, .duration, .duration), (.subtract, .duration, .duration): return .duration
        case (.multiply, .duration, .number), (.multiply, .number, .duration), (.divide, .duration, .number):
            return .duration
        case (.divide, .duration, .duration): return .number
        case (_, .number, .number): return .number
        default: return nil
        }
    }

    /// Records a literal compared with an answer, for ``AnswerNotes`` to check against the source's answers.
    private func noteAnswerLiteral(_ answer: Bound, _ literal: Bound, _ op: BinaryOperator, _ range: Range<Int>) {
        let element: String
        switch answer {
        case .answer(let e), .ofSession(.answer(let e)): element = e
        default: return
        }
        guard case .literal(let value) = literal else { return }
        switch value {
        case .string, .integer, .number:
            notes.answerLiterals.append(AnswerLiteral(element: element, op: op, literal: value, range: range))
        default:
            return
        }
    }

    /// A note for an event name written in quotes (`name == "…"`, `did("…")`, a quoted funnel step or ignored
    /// name) that no known event has but that is close to a known one.
    ///
    /// Any name may arrive (unknown analytics names verbatim), so an unknown one is not an error; one close to a
    /// known name is most likely a typo, which would otherwise silently match nothing.
    func noteUnknownEventName(_ value: String, at range: Range<Int>) {
        guard !TypeChecker.eventNames.contains(value),
            let known = Suggestions.closest(to: value, in: TypeChecker.eventNames)
        else {
            return
        }
        notes.items.append(
            QueryError(
                .note, "no known event is named `\(value)`; did you mean `\(known)`?", at: range,
                in: text, label: "other names are matched as written"))
    }

    /// Literals compared with `kind`, `exit` or `element_type` must be values those fields take. An event name or
    /// an onboarding id tested for equality (`==`, `!=`, `in`; `equality`) is noted when it looks mistaken (a bound
    /// of a range, `onboarding >= "4"`, need not be a value that exists).
    private func checkEnumerated(_ field: Expr, _ literal: Expr, equality: Bool, _ scope: Scope) throws(QueryError) {
        guard case .name(let name) = field.kind, case .literal(.string(let value)) = literal.kind else { return }
        if name == "name" {
            if equality { noteUnknownEventName(value, at: literal.range) }
            return
        }
        if name == "onboarding" {
            // Only the field itself: after a reduction, a column of that name may hold anything (`select session as
            // onboarding`).
            if equality, !scope.isTable {
                notes.onboardingLiterals.append(PlacedString(value: value, range: literal.range))
            }
            return
        }
        let (what, allowed): (String, [String])
        switch name {
        case "kind": (what, allowed) = ("event kind", EventKind.allCases.map(\.rawValue))
        case "exit": (what, allowed) = ("exit", Exit.allCases.map(\.rawValue))
        case "element_type": (what, allowed) = ("element type", ElementType.allCases.map(\.rawValue))
        default: return
        }
        guard !allowed.contains(value) else { return }
        let hint = Suggestions.didYouMean(value, in: allowed)
        throw fail(
            "unknown \(what) `\(value)`\(hint)", literal.range, label: "one of: \(allowed.joined(separator: ", "))")
    }

    private func field(_ name: String, _ range: Range<Int>, _ scope: Scope) throws(QueryError) -> (Bound, QueryType) {
        if let property = sessionProperty(name, range, scope) {
            if case .step = scope { throw stepReadsEvents(name, range) }
            let (bound, type) = try field(property, range.lowerBound + 8..<range.upperBound, .sessions)
            return (scope.isSessions ? bound : .ofSession(bound), type)
        }
        switch scope {
        case .events, .step, .funnelBy:
            if let field = EventField(rawValue: name) {
                if field == .dwell, !scope.isEvents {
                    throw fail(
                        "`dwell` is not available in \(checksAnchor ? "the anchor of `paths`" : "funnels")", range)
                }
                return (.event(field), field.type)
            }
            if let field = SessionField(rawValue: name) {
                // A funnel broken down by what the session is: its own value, not one of an event.
                if case .funnelBy = scope { return (.ofSession(.session(field)), field.type) }
                if case .step = scope { throw stepReadsEvents(name, range) }
                throw fail(
                    "`\(name)` is a field of `sessions`, not of events", range,
                    label: "start the query with `sessions` to use it")
            }
            let hint =
                name == "now"
                ? "; did you mean `now()`?" : Suggestions.didYouMean(name, in: EventField.allCases.map(\.rawValue))
            throw fail("unknown field `\(name)`\(hint)", range)
        case .sessions:
            if let field = SessionField(rawValue: name) { return (.session(field), field.type) }
            if EventField(rawValue: name) != nil {
                // A session spans screens: it has the furthest and the last, not one.
                let label =
                    name == "screen"
                    ? "sessions have `furthest_screen`, `last_screen` and `reached(n)`"
                    : "start the query with `events` to use it"
                throw fail("`\(name)` is a field of `events`, not of sessions", range, label: label)
            }
            let hint =
                name == "now"
                ? "; did you mean `now()`?" : Suggestions.didYouMean(name, in: SessionField.allCases.map(\.rawValue))
            throw fail("unknown field `\(name)`\(hint)", range)
        case .table(let columns):
            if let index = columns.firstIndex(where: { $0.name == name }) {
                return (.column(index), columns[index].type)
            }
            let hint = Suggestions.didYouMean(name, in: columns.map(\.name))
            throw fail(
                "unknown column `\(name)`\(hint)", range,
                label: "columns: \(columns.map(\.name).joined(separator: ", "))")
        }
    }

    /// A session's field, answer or property in a funnel step's condition, which is about one event.
    private func stepReadsEvents(_ written: String, _ range: Range<Int>) -> QueryError {
        if checksAnchor {
            return fail(
                "`\(written)` describes the session; the anchor of `paths` is one event, its condition reads the "
                    + "event's fields", range, label: "filter sessions with a `where` before `paths`")
        }
        return fail(
            "`\(written)` describes the session; a funnel step's condition reads the event's fields", range,
            label: "filter sessions with a `where` before the funnel, or break the funnel down `by \(written)`")
    }

    /// `session.completed` or `session.answer("goal")` read where the event's session can be (`events` rows, a
    /// funnel's `by`): the name after `session.`; nil for any other name. Elsewhere (a result's columns, a funnel
    /// step's condition), a type error says where it can be used.
    private func sessionProperty(_ name: String, _ range: Range<Int>, _ scope: Scope) -> String? {
        guard name.hasPrefix("session.") else { return nil }
        return String(name.dropFirst(8))
    }

    private func call(
        _ name: String, _ nameRange: Range<Int>, _ args: [Expr], _ range: Range<Int>,
        _ scope: Scope
    ) throws(QueryError) -> (Bound, QueryType) {
        if let property = sessionProperty(name, nameRange, scope) {
            switch scope {
            case .table(let columns):
                throw fail(
                    "`\(name)(…)` describes an event's session; this stage reads the result's columns", nameRange,
                    label: "columns: \(columns.map(\.name).joined(separator: ", "))")
            case .step:
                throw stepReadsEvents("\(name)(…)", nameRange)
            default:
                let (bound, type) = try call(
                    property, nameRange.lowerBound + 8..<nameRange.upperBound, args, range, .sessions)
                return (scope.isSessions ? bound : .ofSession(bound), type)
            }
        }
        let isSessions = if case .sessions = scope { true } else { false }
        if ["answer", "did", "reached"].contains(name), case .funnelBy = scope {
            let (bound, type) = try call(name, nameRange, args, range, .sessions)
            return (.ofSession(bound), type)
        }
        if ["answer", "did", "reached"].contains(name), !isSessions {
            if case .table(let columns) = scope {
                // After a reduction (or once listed rows have their columns), stages read the result's columns.
                throw fail(
                    "`\(name)(…)` describes a session; this stage reads the result's columns", nameRange,
                    label: "columns: \(columns.map(\.name).joined(separator: ", "))")
            }
            if case .step = scope { throw stepReadsEvents("\(name)(…)", nameRange) }
            throw fail("`\(name)(…)` describes a session; use it after `sessions`", nameRange)
        }
        func one() throws(QueryError) -> Expr {
            guard args.count == 1 else {
                throw fail("`\(name)` takes 1 argument, found \(args.count)", range)
            }
            return args[0]
        }
        switch name {
        case "now":
            guard args.isEmpty else { throw fail("`now` takes no arguments", range) }
            return (.now, .time)
        case "hour", "day", "week", "month":
            return try bucket(TimeUnit(rawValue: name)!, args, range, scope)
        case "year":
            return try year(args, range, scope)
        case "answer":
            let arg = try one()
            guard case .literal(.string(let element)) = arg.kind else {
                throw fail("`answer` takes an element id as a string", arg.range, label: "e.g. answer(\"experience\")")
            }
            return (.answer(element), .answer)
        case "did":
            let arg = try one()
            switch arg.kind {
            case .literal(.string(let event)):
                noteUnknownEventName(event, at: arg.range)
                return (.did(event), .bool)
            case .name(let event):
                guard TypeChecker.eventNames.contains(event) else {
                    let hint = Suggestions.didYouMean(event, in: TypeChecker.eventNames)
                    throw fail(
                        "unknown event `\(event)`\(hint)", arg.range,
                        label: "an event kind or analytics name; quote other names")
                }
                return (.did(event), .bool)
            default:
                throw fail("`did` takes an event kind or name", arg.range, label: "e.g. did(open_paywall)")
            }
        case "reached":
            let arg = try one()
            guard case .literal(.integer(let n)) = arg.kind, n >= 0, n <= Int64(Meta.maxScreenIndex) else {
                throw fail("`reached` takes a screen index", arg.range, label: "e.g. reached(3)")
            }
            return (.reached(Int(n)), .bool)
        default:
            if AggregateFunction.names.contains(name) {
                throw fail("`\(name)` is an aggregate; use it in `stats`", nameRange)
            }
            let candidates = isSessions ? Functions.session : Functions.events
            let hint = Suggestions.didYouMean(name, in: candidates)
            throw fail("unknown function `\(name)`\(hint)", nameRange)
        }
    }
}
