import BoardwalkJSON
import BoardwalkModel
import BoardwalkStore

/// The ClickHouse side of Boardwalk: the table the exported rows go into (see `docs/clickhouse.md`).
///
/// One row per stored event, with every field the query language reads, already in the form queries see it:
/// the store's session id (inferred ones included, `inferred:<seq>`), empty ids and element ids as `NULL`
/// (semantics rule 11), the answer split by its shape, and the arrival `seq`.
@usableFromInline
package enum ClickHouseTable {
    /// The default table name.
    @usableFromInline
    package static let defaultName = "boardwalk_events"

    /// `CREATE TABLE` for the exported rows: a MergeTree ordered like the store's key,
    /// `(onboarding, screen, time, seq)`.
    ///
    /// `onboarding` and `screen` are `Nullable` (an event without `meta` has neither), so the table allows
    /// nullable sorting keys; `NULL` sorts last in the key.
    package static func createStatement(table: String = defaultName) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(quotedIdentifier(table))
        (
            seq            UInt64,
            time           DateTime64(6, 'UTC'),
            kind           LowCardinality(String),
            name           LowCardinality(String),
            onboarding     LowCardinality(Nullable(String)),
            screen         Nullable(Int32),
            screen_cid     Nullable(String),
            total_screens  Nullable(Int64),
            session        String,
            profile        Nullable(String),
            event_id       Nullable(String),
            placement      LowCardinality(Nullable(String)),
            variation      LowCardinality(Nullable(String)),
            action         Nullable(String),
            element        Nullable(String),
            element_type   LowCardinality(Nullable(String)),
            reply          Nullable(String),
            value_kind     LowCardinality(String),
            value_string   Nullable(String),
            value_number   Nullable(Float64),
            value_set      Array(String),
            label_kind     LowCardinality(String),
            label_string   Nullable(String),
            label_set      Array(String),
            option_kind    LowCardinality(String),
            option_string  Nullable(String),
            option_set     Array(String),
            input_type     LowCardinality(Nullable(String)),
            error_domain   Nullable(String),
            error_code     Nullable(Int64),
            error_message  Nullable(String)
        )
        ENGINE = MergeTree
        ORDER BY (onboarding, screen, time, seq)
        SETTINGS allow_nullable_key = 1;

        """
    }

    /// The instants a `DateTime64(6)` column holds (1900-01-01 to 2299-12-31, UTC). ClickHouse stores a
    /// time outside them as the nearest bound without a word, so the export refuses such an event instead.
    package static let timeRange: ClosedRange<Timestamp> =
        Timestamp(microseconds: -2_208_988_800_000_000)...Timestamp(microseconds: 10_413_791_999_999_999)

    /// One event as a `JSONEachRow` line (with its newline), in the columns of ``createStatement(table:)``.
    ///
    /// `value_kind` is `""` (no answer), `"string"`, `"number"` or `"set"` (a multi-select's option values,
    /// sorted and unique), and says which of `value_string`, `value_number`, `value_set` holds the answer
    /// (rule 9: dates as `YYYY-MM-DD` with `?` for missing parts). `label_kind` is `""`, `"string"` or `"set"`.
    /// - Complexity: O(size of the event).
    package static func row(seq: UInt64, event stored: Event) -> String {
        let e = Store.normalized(stored)
        var out = "{\"seq\":\(seq),\"time\":\""
        // ClickHouse's basic DateTime64 parser reads `YYYY-MM-DD hh:mm:ss.ffffff`; the column's zone is UTC.
        var iso = e.time.iso8601
        iso.removeLast()
        out += iso.replacing("T", with: " ", maxReplacements: 1)
        out += "\",\"kind\":\"\(e.kind.rawValue)\",\"name\":"
        JSONString.append(e.queryName, to: &out)
        func field(_ key: String, _ value: String?) {
            out += ",\"\(key)\":"
            if let value { JSONString.append(value, to: &out) } else { out += "null" }
        }
        func number(_ key: String, _ value: Int?) {
            out += ",\"\(key)\":" + (value.map(String.init) ?? "null")
        }
        func nonEmpty(_ s: String?) -> String? { (s?.isEmpty ?? true) ? nil : s }
        field("onboarding", e.meta?.onboardingID)
        number("screen", e.meta?.screenIndex)
        field("screen_cid", e.meta?.screenClientID)
        number("total_screens", e.meta?.totalScreens)
        out += ",\"session\":"
        JSONString.append(e.session ?? "", to: &out)
        field("profile", e.profile)
        field("event_id", e.eventID)
        field("placement", e.placement)
        field("variation", e.variation)
        field("action", e.payload.actionID)
        var element: String?, elementType: String?, reply: String?
        var answer = Value.null, label = Value.null, option = Value.null
        var inputType: String?
        var error: OnboardingError?
        switch e.payload {
        case .analytics(.screenCompleted(let el, let r)):
            element = nonEmpty(el)
            reply = nonEmpty(r)
        case .stateUpdated(let update):
            element = nonEmpty(update.elementID)
            elementType = update.value.elementType.rawValue
            answer = Value.answer(update.value)
            label = Value.label(update.value)
            option = Value.option(update.value)
            if case .input(let input) = update.value { inputType = input.inputType.rawValue }
        case .error(let err):
            error = err
        default:
            break
        }
        field("element", element)
        field("element_type", elementType)
        field("reply", reply)
        func answerColumns(_ prefix: String, _ v: Value, number hasNumber: Bool) {
            var kind = "", text: String?, numeric: Double?, set: [String] = []
            switch v {
            case .string(let s): kind = "string"; text = s
            // A whole date as its text, as every date is written (the date is read back from it in SQL).
            case .bucket(let date): kind = "string"; text = date.description
            case .number(let d): kind = "number"; numeric = d
            case .set(let items): kind = "set"; set = items
            default: break
            }
            out += ",\"\(prefix)_kind\":\"\(kind)\""
            field("\(prefix)_string", text)
            if hasNumber {
                // A non-finite number cannot be written in JSON; it reads as absent.
                out += ",\"\(prefix)_number\":" + (numeric.flatMap { $0.isFinite ? "\($0)" : nil } ?? "null")
            }
            out += ",\"\(prefix)_set\":["
            for (i, item) in set.enumerated() {
                if i > 0 { out += "," }
                JSONString.append(item, to: &out)
            }
            out += "]"
        }
        answerColumns("value", answer, number: true)
        answerColumns("label", label, number: false)
        answerColumns("option", option, number: false)
        field("input_type", inputType)
        field("error_domain", error?.domain)
        number("error_code", error?.code)
        field("error_message", error?.message)
        return out + "}\n"
    }

    /// An identifier in backquotes, as ClickHouse reads it.
    static func quotedIdentifier(_ name: String) -> String {
        if name.utf8.allSatisfy({
            ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F
                || $0 == 0x2E
        }),
            let first = name.utf8.first, !(first >= 0x30 && first <= 0x39)
        {
            return name
        }
        return "`" + name.replacing("\\", with: "\\\\").replacing("`", with: "\\`") + "`"
    }
}
