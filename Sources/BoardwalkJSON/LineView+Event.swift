import BoardwalkModel
internal import CSimdjson

/// Slots that make a message (as opposed to its envelope) at one level.
private let messageMask: UInt64 = [
    S.type, S.id, S.name, S.actionID, S.elementID, S.elementType, S.value, S.reply,
    S.meta, S.params, S.action, S.error,
].reduce(0) { $0 | 1 << UInt64($1) }
/// The fields of the bridge's analytics object `event {name, element_id?, reply?}`.
private let bridgeEventMask: UInt64 = (1 << UInt64(S.name)) | (1 << UInt64(S.elementID)) | (1 << UInt64(S.reply))

extension LineView {
    /// Builds the event of a line that parsed, initializing `out` with it (left uninitialized on a throw).
    ///
    /// With a ``layout`` the event is stored property by property (see ``EventLayout`` for why). `timeUnit` is the
    /// unit of a numeric time (`nil`: told by its size): a parameter rather than a property of the view, which is
    /// copied whole into calls that are not inlined (one more byte took the reader from 127 to 133 ms on
    /// `boardwalk-bench json-read`).
    @inline(__always)
    func event(
        arrival: Timestamp, timeUnit: EpochUnit?, strings: RecentStrings,
        into out: UnsafeMutablePointer<Event>
    ) throws(JSONReadError) {
        // Where the message is (level 0, or 1 when wrapped as "event": {…}), and where a bridge analytics
        // object `event {name, …}` is, if any.
        var m = 0
        var bridge: Int? = nil
        if has(0, S.event) {
            guard slot(0, S.event).type == tObject else { throw typeError(0, S.event, expected: "an object") }
            if mask(1) & ~bridgeEventMask != 0 {
                let clash = mask(0) & messageMask
                if clash != 0 {
                    throw error(
                        .shape, 0, clash.trailingZeroBitCount,
                        "a line that wraps its message in \"event\" cannot also have message fields at the top level")
                }
                m = 1
                if has(1, S.event) {
                    guard slot(1, S.event).type == tObject else { throw typeError(1, S.event, expected: "an object") }
                    bridge = 2
                }
            } else {
                bridge = 1
            }
        }

        // The envelope: each field from the top level or from the wrapped message.
        let kind = try self.kind(m, bridge: bridge, kindLevel: try envLevel(S.kind, m))

        var time = arrival
        if let l = try envLevel(S.timestamp, m) { time = try timestamp(l, timeUnit) ?? arrival }

        // Ids, with the bridge's view object as an alternative source.
        let viewLevel = try envLevel(S.view, m)
        if let v = viewLevel, given(v, S.view) { try requireObject(v, S.view) }
        let session = try envelopeID(S.sessionID, view: S.viewID, m, viewLevel, strings)
        let placement = try envelopeID(S.placementID, view: S.viewPlacementID, m, viewLevel, strings)
        let variation = try envelopeID(S.variationID, view: S.viewVariationID, m, viewLevel, strings)
        var profile: String? = nil
        if let l = try envLevel(S.profileID, m) { profile = try optionalString(l, S.profileID, strings) }
        var eventID: String? = nil
        if let l = try envLevel(S.eventID, m) { eventID = try optionalUncachedString(l, S.eventID) }

        let meta = try self.meta(m, required: kind != .error, strings)
        let payload: Payload
        switch kind {
        case .analytics: payload = .analytics(try analytics(m, bridge: bridge, strings))
        case .stateUpdated: payload = .stateUpdated(try stateUpdate(m, strings))
        case .openPaywall: payload = .openPaywall(actionID: try actionID(m, strings))
        case .custom: payload = .custom(actionID: try actionID(m, strings))
        case .close: payload = .close(actionID: try actionID(m, strings))
        case .onboardingLoaded: payload = .onboardingLoaded
        case .error: payload = .error(try onboardingError(m, strings))
        }
        if let layout {
            layout.initialize(
                out, time: time, session: session, profile: profile, eventID: eventID, placement: placement,
                variation: variation, meta: meta, payload: payload)
        } else {
            out.initialize(
                to: Event(
                    time: time, session: session, profile: profile, eventID: eventID, placement: placement,
                    variation: variation, meta: meta, payload: payload))
        }
    }

    /// The level an envelope field is given at: the top level or the wrapped message `m`, not both.
    @inline(__always)
    func envLevel(_ id: Int, _ m: Int) throws(JSONReadError) -> Int? {
        if m == 0 { return has(0, id) ? 0 : nil }
        return try wrappedEnvLevel(id)
    }

    /// ``envLevel(_:_:)`` for a wrapped message, apart so that the common unwrapped case inlines.
    @inline(never)
    func wrappedEnvLevel(_ id: Int) throws(JSONReadError) -> Int? {
        if has(0, id) && has(1, id) {
            throw error(.duplicate, 1, id, "given both at the top level and inside \"event\"")
        }
        return has(1, id) ? 1 : has(0, id) ? 0 : nil
    }

    /// An envelope id given directly or in the bridge's `view` object (equal if both).
    func envelopeID(_ direct: Int, view viewID: Int, _ m: Int, _ viewLevel: Int?, _ strings: RecentStrings)
        throws(JSONReadError) -> String?
    {
        let d = try envLevel(direct, m)
        let a = d.flatMap { given($0, direct) ? $0 : nil }
        let b = viewLevel.flatMap { has($0, viewID) && slot($0, viewID).type != tNull ? $0 : nil }
        if let a, let b {
            let x = slot(a, direct), y = slot(b, viewID)
            guard x.type == tString else { throw typeError(a, direct, expected: "a string") }
            guard y.type == tString, x.len == y.len,
                memcmpEqual(
                    UnsafeRawPointer(x.s!).assumingMemoryBound(to: UInt8.self), UnsafeRawPointer(y.s!), Int(x.len))
            else {
                throw error(.shape, b, viewID, "disagrees with \(path(a, direct))")
            }
        }
        if let a { return try optionalString(a, direct, strings) }
        if let b { return try optionalString(b, viewID, strings) }
        return nil
    }

    // MARK: Kind

    /// The kind from `type`, the bridge's `id` or the envelope's `kind` (which must agree), else from the shape.
    func kind(_ m: Int, bridge: Int?, kindLevel: Int?) throws(JSONReadError) -> EventKind {
        var kind: EventKind? = nil
        var source = 0
        func take(_ k: EventKind, _ level: Int, _ id: Int) throws(JSONReadError) {
            if let kind, kind != k {
                throw error(
                    .shape, level, id,
                    "\"\(k.rawValue)\" contradicts \(path(source == S.kind ? kindLevel! : m, source)) \"\(kind.rawValue)\""
                )
            }
            kind = k
            source = id
        }
        if given(m, S.type) {
            let s = slot(m, S.type)
            guard s.type == tString else { throw typeError(m, S.type, expected: "a string") }
            guard let k = Codes.kind(s.i) else {
                throw error(
                    .unknownValue, m, S.type,
                    "unknown type \(quoted(bytes(s))); expected one of "
                        + EventKind.allCases.map(\.rawValue).joined(separator: ", "))
            }
            try take(k, m, S.type)
        }
        if given(m, S.id) {
            let s = slot(m, S.id)
            guard s.type == tString else { throw typeError(m, S.id, expected: "a string") }
            guard let k = Codes.kind(s.i) else {
                throw error(.unknownValue, m, S.id, "unknown bridge event id \(quoted(bytes(s)))")
            }
            try take(k, m, S.id)
        }
        if let l = kindLevel, given(l, S.kind) {
            let s = slot(l, S.kind)
            guard s.type == tString else { throw typeError(l, S.kind, expected: "a string") }
            guard let k = Codes.kind(s.i) else {
                throw error(
                    .unknownValue, l, S.kind,
                    "unknown kind \(quoted(bytes(s))); expected one of "
                        + EventKind.allCases.map(\.rawValue).joined(separator: ", "))
            }
            if let kind, kind != k {
                throw error(.shape, l, S.kind, "\"\(k.rawValue)\" contradicts \(path(m, source)) \"\(kind.rawValue)\"")
            }
            kind = k
        }
        if let kind { return kind }

        // No kind signal: the shape decides, except where shapes are ambiguous.
        if has(m, S.action) {
            if has(m, S.actionActionID) { throw ambiguousAction(m, S.actionActionID) }
            return .stateUpdated
        }
        if has(m, S.elementID) && (has(m, S.params) || has(m, S.elementType) || has(m, S.value)) {
            return .stateUpdated
        }
        if has(m, S.name) || bridge != nil { return .analytics }
        if has(m, S.error) { return .error }
        if has(m, S.actionID) { throw ambiguousAction(m, S.actionID) }
        if has(m, S.meta) { return .onboardingLoaded }
        throw JSONReadError(
            code: .shape, line: line, column: nil, path: nil,
            reason: "no event found: expected \"type\", \"meta\" or another shape from docs/events.md")
    }

    func ambiguousAction(_ level: Int, _ id: Int) -> JSONReadError {
        error(
            .shape, level, id,
            "an action without \"type\" or \"kind\": custom, close and open_paywall actions look alike, so the envelope must say \"kind\""
        )
    }

    // MARK: Envelope

    func timestamp(_ l: Int, _ timeUnit: EpochUnit?) throws(JSONReadError) -> Timestamp? {
        let s = slot(l, S.timestamp)
        switch s.type {
        case tNull: return nil
        case tString:
            guard let t = Timestamp.parseISO8601(bytes(s)) else {
                throw error(
                    .range, l, S.timestamp,
                    "expected an ISO-8601 time in the years 1970 through 9999, found the string \(quoted(bytes(s)))")
            }
            return t
        case tInt:
            // Milliseconds, what most logs write, with literal bounds: `Timestamp.range` is a global, whose lazy
            // initialization is checked at every use. Everything else is told apart out of line.
            let n = s.i
            if timeUnit == nil, n >= 1_000_000_000_000, n <= 253_402_300_799_999 {
                return Timestamp(microseconds: n &* 1000)
            }
            return try integerTime(l, n, timeUnit)
        case tDouble:
            return try fractionalTime(l, s.d, timeUnit)
        case tUInt:
            throw numericTimeError(l, Double(UInt64(bitPattern: s.i)), text: "\(UInt64(bitPattern: s.i))", timeUnit)
        default:
            throw typeError(
                l, S.timestamp,
                expected: "an ISO-8601 string or a number of epoch seconds, milliseconds or microseconds")
        }
    }

    /// An integer time other than milliseconds told by size: in `timeUnit`, or seconds or microseconds by size.
    @inline(never)
    func integerTime(_ l: Int, _ n: Int64, _ timeUnit: EpochUnit?) throws(JSONReadError) -> Timestamp {
        if let unit = timeUnit ?? EpochUnit.bySize(n), n >= 0, n <= unit.largest {
            return Timestamp(microseconds: n &* unit.microseconds)
        }
        throw numericTimeError(l, Double(n), text: "\(n)", timeUnit)
    }

    /// A time given as a number with a fraction or an exponent (`1793491200.25`), rounded to the microsecond.
    @inline(never)
    func fractionalTime(_ l: Int, _ d: Double, _ timeUnit: EpochUnit?) throws(JSONReadError) -> Timestamp {
        let unit: EpochUnit?
        if let fixed = timeUnit {
            unit = fixed
        } else if d >= 0, d < 9.3e18 {
            unit = EpochUnit.bySize(Int64(d))
        } else {
            unit = nil
        }
        if let unit, d >= 0, d <= Double(unit.largest) {
            let micros = (d * Double(unit.microseconds)).rounded()
            if micros <= Double(Timestamp.range.upperBound.microseconds) {
                return Timestamp(microseconds: Int64(micros))
            }
        }
        throw numericTimeError(l, d, text: "\(d)", timeUnit)
    }

    /// The rejection of a numeric time: outside the years 1970 through 9999 in the unit given, or of a size that
    /// could be more than one unit.
    @inline(never)
    func numericTimeError(_ l: Int, _ value: Double, text: String, _ timeUnit: EpochUnit?) -> JSONReadError {
        if let unit = timeUnit {
            return error(.range, l, S.timestamp, "epoch \(unit.name) \(text) are outside the years 1970 through 9999")
        }
        if value < 0 {
            return error(.range, l, S.timestamp, "the epoch time \(text) is before 1970")
        }
        if value > Double(EpochUnit.microseconds.largest) {
            return error(
                .range, l, S.timestamp,
                "the epoch time \(text) is after the year 9999 in seconds, milliseconds and microseconds alike")
        }
        return error(
            .range, l, S.timestamp,
            "the epoch time \(text) could be in more than one unit: seconds, milliseconds and microseconds are told "
                + "apart by size only for times after 2001-09-09; give the unit (--time-unit s|ms|us, "
                + "EventReader.timeUnit)")
    }

    func meta(_ m: Int, required: Bool, _ strings: RecentStrings) throws(JSONReadError) -> Meta? {
        guard given(m, S.meta) else {
            if required { throw missing(m, S.meta) }
            return nil
        }
        try requireObject(m, S.meta)
        // Name a missing field in the spelling the other fields use.
        // (Worked out only for the error: a line with all four fields never needs it.)
        func camel() -> Int {
            for id in S.metaOnboardingID...S.metaTotalScreens where has(m, id) && slot(m, id).alias != 0 { return 1 }
            return 0
        }
        guard has(m, S.metaOnboardingID) else {
            throw missing(m, S.metaOnboardingID, parent: S.meta, spelling: camel())
        }
        let onboarding = try requiredString(m, S.metaOnboardingID, parent: S.meta, strings)
        guard has(m, S.metaScreenCID) else { throw missing(m, S.metaScreenCID, parent: S.meta, spelling: camel()) }
        let screen = try requiredString(m, S.metaScreenCID, parent: S.meta, strings)
        guard has(m, S.metaScreenIndex) else { throw missing(m, S.metaScreenIndex, parent: S.meta, spelling: camel()) }
        let index = try integer(m, S.metaScreenIndex)
        guard index >= 0, index <= Meta.maxScreenIndex else {
            throw error(.range, m, S.metaScreenIndex, "screen index \(index) is outside 0...\(Meta.maxScreenIndex)")
        }
        guard has(m, S.metaTotalScreens) else {
            throw missing(m, S.metaTotalScreens, parent: S.meta, spelling: camel())
        }
        let total = try integer(m, S.metaTotalScreens)
        guard total >= 0, total <= Meta.maxScreenIndex + 1 else {
            throw error(
                .range, m, S.metaTotalScreens, "screen count \(total) is outside 0...\(Meta.maxScreenIndex + 1)")
        }
        return Meta(onboardingID: onboarding, screenClientID: screen, screenIndex: index, totalScreens: total)
    }

    // MARK: Payloads

    func analytics(_ m: Int, bridge: Int?, _ strings: RecentStrings) throws(JSONReadError) -> AnalyticsEvent {
        let nameLevel: Int
        if let b = bridge, has(b, S.name) {
            if has(m, S.name) {
                throw error(.duplicate, b, S.name, "the name is given both here and in \(path(m, S.name))")
            }
            nameLevel = b
        } else {
            guard has(m, S.name) else { throw missing(bridge ?? m, S.name, parent: nil) }
            nameLevel = m
        }
        let nameSlot = slot(nameLevel, S.name)
        guard nameSlot.type == tString else { throw typeError(nameLevel, S.name, expected: "a string") }
        let known = Codes.analytics(nameSlot.i)

        var elementID: String? = nil, reply: String? = nil
        if let b = bridge {
            // Android's bridge turns a missing element_id / reply into "" and a JSON null into "null".
            elementID = try optionalString(b, S.elementID, strings)
            reply = try optionalString(b, S.reply, strings)
            if elementID == "" || elementID == "null" { elementID = nil }
            if reply == "" || reply == "null" { reply = nil }
        } else if given(m, S.params) {
            try requireObject(m, S.params)
            elementID = try optionalString(m, S.paramsElementID, strings)
            reply = try optionalString(m, S.paramsReply, strings)
        }
        switch known {
        case .onboardingStarted: return .onboardingStarted
        case .screenPresented: return .screenPresented
        case .screenCompleted: return .screenCompleted(elementID: elementID, reply: reply)
        case .secondScreenPresented: return .secondScreenPresented
        case .registrationScreenPresented: return .registrationScreenPresented
        case .productsScreenPresented: return .productsScreenPresented
        case .userEmailCollected: return .userEmailCollected
        case .onboardingCompleted: return .onboardingCompleted
        case nil: return .unknown(name: strings.string(bytes(nameSlot)))
        }
    }

    func actionID(_ m: Int, _ strings: RecentStrings) throws(JSONReadError) -> String {
        if has(m, S.actionID) { return try requiredString(m, S.actionID, strings) }
        if given(m, S.action) {
            try requireObject(m, S.action)
            if has(m, S.actionActionID) { return try requiredString(m, S.actionActionID, strings) }
        }
        throw missing(m, S.actionID)
    }

    func onboardingError(_ m: Int, _ strings: RecentStrings) throws(JSONReadError) -> OnboardingError {
        guard given(m, S.error) else { throw missing(m, S.error) }
        try requireObject(m, S.error)
        // The bridge's AdaptyError {adapty_code, message, detail?} has no domain.
        let bridgeStyle = has(m, S.errorCode) && slot(m, S.errorCode).alias == 1
        let domain: String
        if bridgeStyle && !given(m, S.errorDomain) {
            domain = "AdaptyError"
        } else {
            domain = try requiredString(m, S.errorDomain, parent: S.error, strings)
        }
        guard has(m, S.errorCode) else { throw missing(m, S.errorCode, parent: S.error) }
        let code = try integer(m, S.errorCode)
        var message = try requiredString(m, S.errorMessage, parent: S.error, strings)
        if let detail = try optionalString(m, S.errorDetail, strings), !detail.isEmpty {
            message = message.isEmpty ? detail : message + " (" + detail + ")"
        }
        return OnboardingError(domain: domain, code: code, message: message)
    }

    func stateUpdate(_ m: Int, _ strings: RecentStrings) throws(JSONReadError) -> StateUpdate {
        // Bridge: action {element_id, element_type, value}; docs: elementId + params {type, value};
        // wire: element_id, element_type, value at the top.
        let idSlot: Int, typeSlot: Int, valueSlot: Int, fields: Int
        if given(m, S.action) {
            try requireObject(m, S.action)
            (idSlot, typeSlot, valueSlot, fields) = (
                S.actionElementID, S.actionElementType, S.actionValue, S.actionValueFields
            )
        } else if given(m, S.params) {
            try requireObject(m, S.params)
            (idSlot, typeSlot, valueSlot, fields) = (S.elementID, S.paramsType, S.paramsValue, S.paramsValueFields)
        } else {
            (idSlot, typeSlot, valueSlot, fields) = (S.elementID, S.elementType, S.value, S.valueFields)
        }
        let elementID = try requiredString(m, idSlot, strings)
        guard has(m, typeSlot) else { throw missing(m, typeSlot) }
        let t = slot(m, typeSlot)
        guard t.type == tString else { throw typeError(m, typeSlot, expected: "a string") }
        guard let elementType = Codes.elementType(t.i) else {
            throw error(
                .unknownValue, m, typeSlot,
                "unknown element type \(quoted(bytes(t))); expected one of select, multi_select, input, date_picker")
        }
        guard has(m, valueSlot) else { throw missing(m, valueSlot) }
        let v = slot(m, valueSlot)
        let value: StateValue
        switch elementType {
        case .select:
            guard v.type == tObject else { throw typeError(m, valueSlot, expected: "an object") }
            value = .select(
                Choice(
                    id: try requiredString(m, fields + S.vfID, parent: valueSlot, strings),
                    value: try requiredString(m, fields + S.vfValue, parent: valueSlot, strings),
                    label: try requiredString(m, fields + S.vfLabel, parent: valueSlot, strings)))
        case .multiSelect:
            guard v.type == tArray else { throw typeError(m, valueSlot, expected: "an array") }
            var list: [Choice] = []
            list.reserveCapacity(Int(v.len))
            for i in 0..<Int(v.len) {
                list.append(try choice(choices[Int(v.i) + i], m, valueSlot, i, strings))
            }
            value = .multiSelect(list)
        case .input:
            guard v.type == tObject else { throw typeError(m, valueSlot, expected: "an object") }
            guard has(m, fields + S.vfType) else { throw missing(m, fields + S.vfType, parent: valueSlot) }
            let ts = slot(m, fields + S.vfType)
            guard ts.type == tString else { throw typeError(m, fields + S.vfType, expected: "a string") }
            guard let inputType = Codes.inputType(ts.i) else {
                throw error(
                    .unknownValue, m, fields + S.vfType,
                    "unknown input type \(quoted(bytes(ts))); expected one of text, email, number")
            }
            switch inputType {
            case .text: value = .input(.text(try requiredString(m, fields + S.vfValue, parent: valueSlot, strings)))
            case .email: value = .input(.email(try requiredString(m, fields + S.vfValue, parent: valueSlot, strings)))
            case .number: value = .input(.number(try number(m, fields + S.vfValue, parent: valueSlot)))
            }
        case .datePicker:
            guard v.type == tObject else { throw typeError(m, valueSlot, expected: "an object") }
            value = .datePicker(
                DateParts(
                    year: try optionalInteger(m, fields + S.vfYear),
                    month: try optionalInteger(m, fields + S.vfMonth),
                    day: try optionalInteger(m, fields + S.vfDay)))
        }
        return StateUpdate(elementID: elementID, value: value)
    }

    /// A number input's value: a JSON number, or (Flutter sends every input as text) a string that is a JSON
    /// number, or one of the strings `Infinity`, `-Infinity`, `NaN` the canonical writer uses for non-finite values.
    func number(_ m: Int, _ id: Int, parent: Int) throws(JSONReadError) -> Double {
        guard has(m, id) else { throw missing(m, id, parent: parent) }
        let s = slot(m, id)
        switch s.type {
        case tInt: return Double(s.i)
        case tUInt: return Double(UInt64(bitPattern: s.i))
        case tDouble: return s.d
        case tString:
            let b = bytes(s)
            if let d = parseJSONNumber(b) { return d }
            if b.elementsEqual("Infinity".utf8) { return .infinity }
            if b.elementsEqual("-Infinity".utf8) { return -.infinity }
            if b.elementsEqual("NaN".utf8) { return .nan }
            throw error(.type, m, id, "expected a number (or a string holding one), found the string \(quoted(b))")
        default:
            throw typeError(m, id, expected: "a number")
        }
    }

    /// One multi-select element; the path (`params.value[2]`) is only built for an error.
    func choice(_ c: bw_choice, _ level: Int, _ valueSlot: Int, _ index: Int, _ strings: RecentStrings)
        throws(JSONReadError) -> Choice
    {
        func path(_ field: String) -> String {
            self.path(level, valueSlot) + "[\(index)]" + (field.isEmpty ? "" : "." + field)
        }
        guard c.`self`.type == tObject else {
            throw JSONReadError(
                code: .type, line: line, column: column(c.`self`.offset), path: path(""),
                reason: "expected an object, found \(describe(c.`self`))")
        }
        @inline(__always)
        func field(_ s: bw_slot, _ name: String, _ strings: RecentStrings) throws(JSONReadError) -> String {
            if s.type == tString { return strings.string(bytes(s)) }
            if s.type == tAbsent {
                throw JSONReadError(
                    code: .missing, line: line, column: column(c.`self`.offset), path: path(name),
                    reason: "required, but missing")
            }
            throw JSONReadError(
                code: .type, line: line, column: column(s.offset), path: path(name),
                reason: "expected a string, found \(describe(s))")
        }
        return Choice(
            id: try field(c.id, "id", strings), value: try field(c.value, "value", strings),
            label: try field(c.label, "label", strings))
    }
}

/// Parses bytes that form exactly one JSON number (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
func parseJSONNumber(_ b: UnsafeRawBufferPointer) -> Double? {
    var i = 0
    let n = b.count
    func digits() -> Int {
        let start = i
        while i < n, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
        return i - start
    }
    if i < n, b[i] == 0x2D { i += 1 }
    guard i < n else { return nil }
    if b[i] == 0x30 { i += 1 } else if digits() == 0 { return nil }
    if i < n, b[i] == 0x2E {
        i += 1
        guard digits() > 0 else { return nil }
    }
    if i < n, b[i] == 0x65 || b[i] == 0x45 {
        i += 1
        if i < n, b[i] == 0x2B || b[i] == 0x2D { i += 1 }
        guard digits() > 0 else { return nil }
    }
    guard i == n else { return nil }
    guard let d = Double(String(decoding: b, as: UTF8.self)), d.isFinite else { return nil }
    return d
}
