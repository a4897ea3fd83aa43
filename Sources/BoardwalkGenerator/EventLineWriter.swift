import BoardwalkJSON
import BoardwalkModel

/// Writes events as NDJSON lines in the shapes real sources produce (see `docs/events.md`), for test corpora
/// and `boardwalk generate`. This is not the canonical writer (that lives in `BoardwalkJSON`): its job is
/// variety, so the reader meets every shape, spelling and envelope it must accept.
///
/// Every line carries an envelope with the event's record fields: a time (`timestamp`, `ts`, `created_at` or
/// `received_at`; epoch milliseconds or ISO-8601), `session_id` (or the bridge's `view.id`), `profile_id`,
/// `event_id`, `placement_id`, `variation_id`, and `kind` where the message's shape does not say its kind.
package struct EventLineWriter: Sendable {
    /// The message shapes of `docs/events.md`.
    package enum Shape: String, CaseIterable, Hashable, Sendable {
        /// The web-view message: `type`, snake_case fields, `meta` with snake_case keys.
        case wire
        /// The docs' camelCase examples: `actionId`, `elementId`, `meta {onboardingId, screenClientId,
        /// screenIndex, screensTotal}`, `params {type, value}` with `multiSelect`/`datePicker`.
        case docsCamel
        /// The docs' snake_case examples: `action_id`, `element_id`, `meta {onboarding_id, screen_cid, …}`.
        case docsSnake
        /// The cross-platform bridge: `meta` at top level, `event {name, element_id?, reply?}`,
        /// `action {element_id, element_type, value}` or `action {action_id}`, `view {id, placement_id,
        /// variation_id}`.
        case bridge
    }

    /// Where the envelope's fields go.
    package enum Layout: String, CaseIterable, Hashable, Sendable {
        /// Envelope fields beside the message's own, in one object.
        case flat
        /// `{…envelope…, "event": {…message…}}`. Not used with ``Shape/bridge``, whose `event` key is taken.
        case wrapped
    }

    /// How the event's time is written.
    package enum TimeStyle: Hashable, Sendable {
        /// An integer of epoch milliseconds (exact only for times on a whole millisecond).
        case milliseconds
        /// An ISO-8601 string in UTC.
        case iso8601
    }

    /// The choices for one line.
    package struct Style: Hashable, Sendable {
        /// The message shape (errors are always written in the wire layout; see ``effectiveShape(of:requested:)``).
        package var shape: Shape
        /// Envelope beside the message or around it (always flat for the bridge).
        package var layout: Layout
        /// The key of the time: one of ``timeKeys``.
        package var timeKey: String
        /// Milliseconds or ISO-8601.
        package var timeStyle: TimeStyle
        /// Spell the count `totalScreens` (Android/JS) instead of the shape's own spelling.
        package var totalScreensAsAndroid: Bool

        package init(
            shape: Shape, layout: Layout = .flat, timeKey: String = "timestamp", timeStyle: TimeStyle = .milliseconds,
            totalScreensAsAndroid: Bool = false
        ) {
            self.shape = shape
            self.layout = shape == .bridge ? .flat : layout
            self.timeKey = timeKey
            self.timeStyle = timeStyle
            self.totalScreensAsAndroid = totalScreensAsAndroid
        }

        /// The keys a reader accepts for the time.
        package static let timeKeys = ["timestamp", "ts", "created_at", "received_at"]

        /// A style drawn at random: every shape, layout, time key and time format.
        package static func random(using rng: inout SplitMix64) -> Style {
            Style(
                shape: Shape.allCases.randomElement(using: &rng)!,
                layout: rng.chance(0.25) ? .wrapped : .flat,
                timeKey: rng.chance(0.7) ? "timestamp" : timeKeys.randomElement(using: &rng)!,
                timeStyle: rng.chance(0.6) ? .milliseconds : .iso8601,
                totalScreensAsAndroid: rng.chance(0.1))
        }
    }

    package init() {}

    /// The shape an event is actually written in: errors have no message shape in the docs or on the wire,
    /// so they are always written as `{"kind": "error", "error": {domain, code, message}, "meta"?: …}` in
    /// the wire layout.
    package static func effectiveShape(of event: Event, requested: Shape) -> Shape {
        event.kind == .error ? .wire : requested
    }

    /// Appends one line (with its trailing newline) for `event` in `style` to `out`.
    package func write(_ event: Event, style: Style, into out: inout String) {
        var o = JSONObjectWriter(out: out)
        out = ""
        let shape = EventLineWriter.effectiveShape(of: event, requested: style.shape)
        o.begin()
        writeEnvelope(event, style: style, shape: shape, into: &o)
        if style.layout == .wrapped, shape != .bridge {
            o.key("event")
            o.begin()
            writeMessage(event, shape: shape, style: style, into: &o)
            o.end()
        } else {
            writeMessage(event, shape: shape, style: style, into: &o)
        }
        o.end()
        o.out.append("\n")
        out = o.out
    }

    /// One line for `event` in `style`, with its trailing newline.
    package func line(_ event: Event, style: Style) -> String {
        var s = ""
        write(event, style: style, into: &s)
        return s
    }

    private func writeEnvelope(_ event: Event, style: Style, shape: Shape, into o: inout JSONObjectWriter) {
        o.key(style.timeKey)
        switch style.timeStyle {
        case .milliseconds where event.time.microseconds % 1000 == 0:
            o.int(event.time.microseconds / 1000)
        default:
            o.string(event.time.iso8601)
        }
        if shape == .bridge {
            // The bridge names the presentation `view.id` and carries placement and variation beside it.
            if let session = event.session {
                o.key("view")
                o.begin()
                o.key("id"); o.string(session)
                if let p = event.placement { o.key("placement_id"); o.string(p) }
                if let v = event.variation { o.key("variation_id"); o.string(v) }
                o.end()
            } else {
                if let p = event.placement { o.key("placement_id"); o.string(p) }
                if let v = event.variation { o.key("variation_id"); o.string(v) }
            }
        } else {
            if let s = event.session { o.key("session_id"); o.string(s) }
            if let p = event.placement { o.key("placement_id"); o.string(p) }
            if let v = event.variation { o.key("variation_id"); o.string(v) }
        }
        if let p = event.profile { o.key("profile_id"); o.string(p) }
        if let e = event.eventID { o.key("event_id"); o.string(e) }
        if needsKind(event, shape: shape) { o.key("kind"); o.string(event.kind.name) }
    }

    /// Whether the message's shape leaves its kind unsaid.
    private func needsKind(_ event: Event, shape: Shape) -> Bool {
        switch shape {
        case .wire: return event.kind == .error
        case .docsCamel, .docsSnake, .bridge:
            switch event.kind {
            case .analytics, .stateUpdated: return false
            case .openPaywall, .custom, .close, .onboardingLoaded, .error: return true
            }
        }
    }

    private func writeMeta(_ meta: Meta, camel: Bool, android: Bool, into o: inout JSONObjectWriter) {
        o.key("meta")
        o.begin()
        o.key(camel ? "onboardingId" : "onboarding_id"); o.string(meta.onboardingID)
        o.key(camel ? "screenClientId" : "screen_cid"); o.string(meta.screenClientID)
        o.key(camel ? "screenIndex" : "screen_index"); o.int(Int64(meta.screenIndex))
        o.key(android ? "totalScreens" : camel ? "screensTotal" : "total_screens"); o.int(Int64(meta.totalScreens))
        o.end()
    }

    private func writeMessage(_ event: Event, shape: Shape, style: Style, into o: inout JSONObjectWriter) {
        let camel = shape == .docsCamel
        if shape == .wire, event.kind != .error { o.key("type"); o.string(event.kind.name) }
        switch event.payload {
        case .analytics(let a):
            if shape == .bridge {
                o.key("event")
                o.begin()
                o.key("name"); o.string(a.name)
                writeCompletionParams(a, into: &o)
                o.end()
            } else {
                o.key("name"); o.string(a.name)
                if case .screenCompleted(let e, let r) = a, e != nil || r != nil {
                    o.key("params")
                    o.begin()
                    writeCompletionParams(a, into: &o)
                    o.end()
                }
            }
        case .stateUpdated(let update):
            switch shape {
            case .wire:
                o.key("element_id"); o.string(update.elementID)
                o.key("element_type"); o.string(update.value.elementType.rawValue)
                o.key("value"); writeValue(update.value, into: &o)
            case .bridge:
                o.key("action")
                o.begin()
                o.key("element_id"); o.string(update.elementID)
                o.key("element_type"); o.string(update.value.elementType.rawValue)
                o.key("value"); writeValue(update.value, into: &o)
                o.end()
            case .docsCamel, .docsSnake:
                o.key(camel ? "elementId" : "element_id"); o.string(update.elementID)
                o.key("params")
                o.begin()
                let docsType =
                    switch update.value.elementType {
                    case .select: "select"
                    case .multiSelect: "multiSelect"
                    case .input: "input"
                    case .datePicker: "datePicker"
                    }
                o.key("type"); o.string(docsType)
                o.key("value"); writeValue(update.value, into: &o)
                o.end()
            }
        case .openPaywall(let id), .custom(let id), .close(let id):
            if shape == .bridge {
                o.key("action")
                o.begin()
                o.key("action_id"); o.string(id)
                o.end()
            } else {
                o.key(camel ? "actionId" : "action_id"); o.string(id)
            }
        case .onboardingLoaded:
            break
        case .error(let error):
            o.key("error")
            o.begin()
            o.key("domain"); o.string(error.domain)
            o.key("code"); o.int(Int64(error.code))
            o.key("message"); o.string(error.message)
            o.end()
        }
        if let meta = event.meta { writeMeta(meta, camel: camel, android: style.totalScreensAsAndroid, into: &o) }
    }

    private func writeCompletionParams(_ a: AnalyticsEvent, into o: inout JSONObjectWriter) {
        if case .screenCompleted(let e, let r) = a {
            if let e { o.key("element_id"); o.string(e) }
            if let r { o.key("reply"); o.string(r) }
        }
    }

    private func writeValue(_ value: StateValue, into o: inout JSONObjectWriter) {
        switch value {
        case .select(let c): writeChoice(c, into: &o)
        case .multiSelect(let cs):
            o.beginArray()
            for c in cs { o.element(); writeChoice(c, into: &o) }
            o.endArray()
        case .input(let input):
            o.begin()
            o.key("type"); o.string(input.inputType.rawValue)
            o.key("value")
            switch input {
            case .text(let s), .email(let s): o.string(s)
            case .number(let d): o.double(d)
            }
            o.end()
        case .datePicker(let p):
            o.begin()
            if let d = p.day { o.key("day"); o.int(Int64(d)) }
            if let m = p.month { o.key("month"); o.int(Int64(m)) }
            if let y = p.year { o.key("year"); o.int(Int64(y)) }
            o.end()
        }
    }

    private func writeChoice(_ c: Choice, into o: inout JSONObjectWriter) {
        o.begin()
        o.key("id"); o.string(c.id)
        o.key("value"); o.string(c.value)
        o.key("label"); o.string(c.label)
        o.end()
    }
}
