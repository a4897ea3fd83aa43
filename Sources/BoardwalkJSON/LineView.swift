import BoardwalkModel
internal import CSimdjson

// Slot types and ids, mirrored from bw_json.h as plain integers.
let tAbsent: UInt8 = 0, tNull: UInt8 = 1, tFalse: UInt8 = 2, tTrue: UInt8 = 3, tInt: UInt8 = 4, tUInt: UInt8 = 5,
    tDouble: UInt8 = 6, tString: UInt8 = 7, tObject: UInt8 = 8, tArray: UInt8 = 9

enum S {
    static let type = 0, kind = 1, id = 2, name = 3, actionID = 4, elementID = 5, elementType = 6, value = 7,
        reply = 8, timestamp = 9, sessionID = 10, profileID = 11, eventID = 12, placementID = 13, variationID = 14,
        meta = 15, params = 16, action = 17, view = 18, error = 19, event = 20
    static let metaOnboardingID = 21, metaScreenCID = 22, metaScreenIndex = 23, metaTotalScreens = 24
    static let paramsType = 25, paramsValue = 26, paramsElementID = 27, paramsReply = 28
    static let actionElementID = 29, actionElementType = 30, actionValue = 31, actionActionID = 32
    static let viewID = 33, viewPlacementID = 34, viewVariationID = 35
    static let errorDomain = 36, errorCode = 37, errorMessage = 38, errorDetail = 39
    /// Value-object fields: base + 0 id, 1 value, 2 label, 3 type, 4 day, 5 month, 6 year.
    static let valueFields = 40, paramsValueFields = 47, actionValueFields = 54
    static let vfID = 0, vfValue = 1, vfLabel = 2, vfType = 3, vfDay = 4, vfMonth = 5, vfYear = 6
}

/// Key spellings per slot id, in the alias order of `bw_keys.h` (the first is canonical).
let slotKeys: [[String]] = {
    var k = [[String]](repeating: [], count: 61)
    k[S.type] = ["type"]; k[S.kind] = ["kind"]; k[S.id] = ["id"]; k[S.name] = ["name"]
    k[S.actionID] = ["action_id", "actionId"]; k[S.elementID] = ["element_id", "elementId"]
    k[S.elementType] = ["element_type", "elementType"]; k[S.value] = ["value"]; k[S.reply] = ["reply"]
    k[S.timestamp] = ["timestamp", "ts", "created_at", "received_at", "createdAt", "receivedAt"]
    k[S.sessionID] = ["session_id", "sessionId"]; k[S.profileID] = ["profile_id", "profileId"]
    k[S.eventID] = ["event_id", "eventId"]; k[S.placementID] = ["placement_id", "placementId"]
    k[S.variationID] = ["variation_id", "variationId"]
    k[S.meta] = ["meta"]; k[S.params] = ["params"]; k[S.action] = ["action"]; k[S.view] = ["view"]
    k[S.error] = ["error"]; k[S.event] = ["event"]
    k[S.metaOnboardingID] = ["onboarding_id", "onboardingId"]; k[S.metaScreenCID] = ["screen_cid", "screenClientId"]
    k[S.metaScreenIndex] = ["screen_index", "screenIndex"]
    k[S.metaTotalScreens] = ["total_screens", "screensTotal", "totalScreens"]
    k[S.paramsType] = ["type"]; k[S.paramsValue] = ["value"]; k[S.paramsElementID] = ["element_id", "elementId"]
    k[S.paramsReply] = ["reply"]
    k[S.actionElementID] = ["element_id", "elementId"]; k[S.actionElementType] = ["element_type", "elementType"]
    k[S.actionValue] = ["value"]; k[S.actionActionID] = ["action_id", "actionId"]
    k[S.viewID] = ["id"]; k[S.viewPlacementID] = ["placement_id", "placementId"]
    k[S.viewVariationID] = ["variation_id", "variationId"]
    k[S.errorDomain] = ["domain"]; k[S.errorCode] = ["code", "adapty_code"]; k[S.errorMessage] = ["message"]
    k[S.errorDetail] = ["detail"]
    for base in [S.valueFields, S.paramsValueFields, S.actionValueFields] {
        for (i, name) in ["id", "value", "label", "type", "day", "month", "year"].enumerated() { k[base + i] = [name] }
    }
    return k
}()

/// The path of the object holding a slot, relative to its level ("" for the level's own fields).
func parentPath(_ id: Int) -> String {
    switch id {
    case 21...24: "meta."
    case 25...28: "params."
    case 29...32: "action."
    case 33...35: "view."
    case 36...39: "error."
    case 40...46: "value."
    case 47...53: "params.value."
    case 54...60: "action.value."
    default: ""
    }
}

func levelPrefix(_ level: Int) -> String { String(repeating: "event.", count: level) }

/// Decoding of the codes the C++ walker stores in a string slot's `i` (see `classify` in bw_keys.h).
enum Codes {
    @inline(__always) static func kind(_ code: Int64) -> EventKind? {
        switch code {
        case 0: .analytics
        case 1: .stateUpdated
        case 2: .openPaywall
        case 3: .custom
        case 4: .close
        case 5: .onboardingLoaded
        case 6: .error
        default: nil
        }
    }
    @inline(__always) static func analytics(_ code: Int64) -> AnalyticsName? {
        switch code {
        case 0: .onboardingStarted
        case 1: .screenPresented
        case 2: .screenCompleted
        case 3: .secondScreenPresented
        case 4: .registrationScreenPresented
        case 5: .productsScreenPresented
        case 6: .userEmailCollected
        case 7: .onboardingCompleted
        default: nil
        }
    }
    @inline(__always) static func elementType(_ code: Int64) -> ElementType? {
        switch code {
        case 0: .select
        case 1: .multiSelect
        case 2: .input
        case 3: .datePicker
        default: nil
        }
    }
    @inline(__always) static func inputType(_ code: Int64) -> InputType? {
        switch code {
        case 0: .text
        case 1: .email
        case 2: .number
        default: nil
        }
    }
}

/// The slots of one parsed line, and everything that turns them into an ``Event`` or a ``JSONReadError``.
struct LineView {
    let status: bw_status
    let slots: UnsafePointer<bw_slot>
    let choices: UnsafePointer<bw_choice>
    let line: Int
    /// Bytes skipped at the start of the line (a BOM), added to every column.
    let shift: Int
    let limits: JSONReaderLimits
    /// How to build the event in place; `nil` builds it with `Event.init`.
    let layout: EventLayout?

    // MARK: Slot access

    @inline(__always) func mask(_ level: Int) -> UInt64 {
        level == 0 ? status.present.0 : level == 1 ? status.present.1 : status.present.2
    }
    @inline(__always) func has(_ level: Int, _ id: Int) -> Bool { mask(level) >> UInt64(id) & 1 == 1 }
    @inline(__always) func slot(_ level: Int, _ id: Int) -> bw_slot { slots[level * Int(BW_SLOTS_PER_LEVEL) + id] }
    /// Present and not JSON null.
    @inline(__always) func given(_ level: Int, _ id: Int) -> Bool { has(level, id) && slot(level, id).type != tNull }

    @inline(__always) func bytes(_ s: bw_slot) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: s.s, count: Int(s.len))
    }

    // MARK: Errors

    func path(_ level: Int, _ id: Int) -> String {
        let keys = slotKeys[id]
        let alias = has(level, id) ? Int(slot(level, id).alias) : 0
        return levelPrefix(level) + parentPath(id) + keys[min(alias, keys.count - 1)]
    }

    func column(_ offset: UInt32) -> Int { Int(offset) + 1 + shift }

    func error(_ code: JSONReadError.Code, _ level: Int, _ id: Int, _ reason: String) -> JSONReadError {
        let column = has(level, id) ? column(slot(level, id).offset) : nil
        return JSONReadError(code: code, line: line, column: column, path: path(level, id), reason: reason)
    }

    func typeError(_ level: Int, _ id: Int, expected: String) -> JSONReadError {
        error(.type, level, id, "expected \(expected), found \(describe(slot(level, id)))")
    }

    /// A required field is absent: the column is the enclosing object's, when there is one.
    func missing(_ level: Int, _ id: Int, parent: Int? = nil, spelling: Int = 0) -> JSONReadError {
        var column: Int?
        if let parent, has(level, parent) { column = self.column(slot(level, parent).offset) }
        let keys = slotKeys[id]
        return JSONReadError(
            code: .missing, line: line, column: column,
            path: levelPrefix(level) + parentPath(id) + keys[min(spelling, keys.count - 1)],
            reason: "required, but missing")
    }

    func describe(_ s: bw_slot) -> String {
        switch s.type {
        case tNull: return "null"
        case tFalse: return "false"
        case tTrue: return "true"
        case tInt: return "the number \(s.i)"
        case tUInt: return "the number \(UInt64(bitPattern: s.i))"
        case tDouble: return "the number \(s.d)"
        case tString: return "the string " + quoted(bytes(s))
        case tObject: return "an object"
        case tArray: return "an array"
        default: return "nothing"
        }
    }

    // MARK: Typed reads

    /// An optional string: absent and null give nil.
    func optionalString(_ level: Int, _ id: Int, _ strings: RecentStrings) throws(JSONReadError) -> String? {
        guard has(level, id) else { return nil }
        let s = slot(level, id)
        if s.type == tNull { return nil }
        guard s.type == tString else { throw typeError(level, id, expected: "a string") }
        return strings.string(bytes(s))
    }

    /// An optional string made afresh, without the cache: for values unique to their line (event ids), which
    /// would never be found in the cache and would only evict the ids that do repeat.
    func optionalUncachedString(_ level: Int, _ id: Int) throws(JSONReadError) -> String? {
        guard has(level, id) else { return nil }
        let s = slot(level, id)
        if s.type == tNull { return nil }
        guard s.type == tString else { throw typeError(level, id, expected: "a string") }
        return String(decoding: bytes(s), as: UTF8.self)
    }

    func requiredString(_ level: Int, _ id: Int, parent: Int? = nil, spelling: Int = 0, _ strings: RecentStrings)
        throws(JSONReadError) -> String
    {
        guard has(level, id) else { throw missing(level, id, parent: parent, spelling: spelling) }
        let s = slot(level, id)
        guard s.type == tString else { throw typeError(level, id, expected: "a string") }
        return strings.string(bytes(s))
    }

    /// An integer slot; `2.0`, `"2"` and integers beyond `Int` are rejected.
    func integer(_ level: Int, _ id: Int) throws(JSONReadError) -> Int {
        let s = slot(level, id)
        switch s.type {
        case tInt: return Int(s.i)
        case tUInt: throw error(.range, level, id, "the number \(UInt64(bitPattern: s.i)) is too large")
        default: throw typeError(level, id, expected: "an integer")
        }
    }

    func optionalInteger(_ level: Int, _ id: Int) throws(JSONReadError) -> Int? {
        guard given(level, id) else { return nil }
        return try integer(level, id)
    }

    func requireObject(_ level: Int, _ id: Int) throws(JSONReadError) {
        guard slot(level, id).type == tObject else { throw typeError(level, id, expected: "an object") }
    }
}

/// A string quoted for an error message: JSON-style escapes, cut after 40 characters.
func quoted(_ bytes: UnsafeRawBufferPointer) -> String {
    let text = String(decoding: bytes, as: UTF8.self)
    var out = "\""
    var count = 0
    for scalar in text.unicodeScalars {
        if count == 40 { out += "…"; break }
        count += 1
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if scalar.value < 0x20 || scalar.value == 0x7F {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}
