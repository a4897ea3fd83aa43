import BoardwalkCodec
import BoardwalkModel

/// Lean fields of a record as numbers, for counting without building a ``Value`` per event: two records with
/// the same code of a field have the same value of it (the converse need not hold: an id of the empty string
/// and no id are both absent for `element`), and ``value(_:_:strings:)`` turns a code back into the value.
///
/// Codes exist for every ``EventField/isLean`` field but `time`, `seq` and `total_screens` (whose raw 64-bit value
/// leaves no room for "absent"): string ids, and small codes for kinds and names. Most have few distinct values;
/// `session` and `profile` have one per session or profile.
enum FieldCode {
    static let absent = UInt64.max

    /// Whether `field` has a code.
    static func has(_ field: EventField) -> Bool {
        field.isLean && field != .time && field != .seq && field != .totalScreens
    }

    /// Marks a known analytics name's code, and a non-analytics kind's name code.
    private static let knownName: UInt64 = 1 << 40
    private static let kindName: UInt64 = 2 << 40

    @inline(__always)
    private static func id(_ id: StringID?) -> UInt64 { id.map { UInt64($0) } ?? absent }

    /// Kind and analytics name codes are the codec's (`EventKind.code`, `AnalyticsName.code`).
    @inline(__always)
    private static func kindCode(_ kind: EventKind) -> UInt64 { UInt64(kind.code) }

    private static func kindText(_ code: UInt64) -> Value {
        EventKind(code: UInt8(truncatingIfNeeded: code)).map { .string($0.rawValue) } ?? .null
    }

    /// The code of `field` (which must have one: ``has(_:)``) in `r`.
    @inline(__always)
    static func code(_ field: EventField, _ r: RecordFields) -> UInt64 {
        switch field {
        case .kind: return kindCode(r.kind)
        case .name:
            switch r.analyticsName {
            case .known(let name)?: return knownName | UInt64(name.code)
            case .unknown(let id)?: return UInt64(id)
            case nil: return kindName | kindCode(r.kind)
            }
        case .onboarding: return id(r.onboarding)
        case .screen: return r.screenIndex.map { UInt64($0) } ?? absent
        case .session: return id(r.session)
        case .profile: return id(r.profile)
        case .placement: return id(r.placement)
        case .variation: return id(r.variation)
        case .action: return id(r.actionID)
        case .element:
            if r.kind == .analytics, r.knownAnalyticsName != .screenCompleted { return absent }
            return id(r.elementID)
        case .reply: return r.knownAnalyticsName == .screenCompleted ? id(r.reply) : absent
        case .elementType:
            switch r.elementType {
            case .select?: return 0
            case .multiSelect?: return 1
            case .input?: return 2
            case .datePicker?: return 3
            case nil: return absent
            }
        case .time, .seq, .totalScreens, .screenCID, .eventID, .value, .label, .dwell, .option, .inputType,
            .errorDomain, .errorCode, .errorMessage:
            preconditionFailure("\(field.rawValue) has no field code")
        }
    }

    /// The code of `kind` or `name` for the events a store block counts under `kindCode` (`RecordFormat.kindCode`:
    /// kind and analytics name); nil when the kind code does not determine it (an analytics name outside the known
    /// ones, a body that is no record) or for any other field.
    static func code(_ field: EventField, kindCode blockCode: UInt8) -> UInt64? {
        guard blockCode != RecordFormat.unclassifiedKindCode else { return nil }
        let kind = UInt64(blockCode >> 4)
        switch field {
        case .kind: return kind
        case .name:
            if kind != kindCode(.analytics) { return kindName | kind }
            let name = blockCode & 0x0F
            return AnalyticsName(code: name) == nil ? nil : knownName | UInt64(name)
        default: return nil
        }
    }

    /// The value of `field` whose code is `code`, strings resolved through `strings` (an id that does not
    /// resolve is absent; `element` and `reply` that resolve to the empty string are absent, rule 11).
    static func value(_ field: EventField, _ code: UInt64, strings: SnapshotStrings) -> Value {
        func text(_ code: UInt64) -> Value {
            guard code != absent, let s = strings.string(StringID(truncatingIfNeeded: code)) else { return .null }
            return .string(s)
        }
        switch field {
        case .kind: return kindText(code)
        case .name:
            if code & knownName != 0 {
                return AnalyticsName(code: UInt8(truncatingIfNeeded: code)).map { .string($0.rawValue) } ?? .null
            }
            if code & kindName != 0 { return kindText(code & 0xFF) }
            return text(code)
        case .screen: return code == absent ? .null : .integer(Int64(code))
        case .onboarding, .session, .profile, .placement, .variation, .action: return text(code)
        case .element, .reply:
            if case .string(let s) = text(code), !s.isEmpty { return .string(s) }
            return .null
        case .elementType:
            let types: [ElementType] = [.select, .multiSelect, .input, .datePicker]
            return code == absent ? .null : .string(types[Int(code)].rawValue)
        case .time, .seq, .totalScreens, .screenCID, .eventID, .value, .label, .dwell, .option, .inputType,
            .errorDomain, .errorCode, .errorMessage:
            preconditionFailure("\(field.rawValue) has no field code")
        }
    }
}

/// Up to four field codes: a group key of a count, or the fields a filter reads.
struct CodeKey: Equatable {
    var c0: UInt64 = 0, c1: UInt64 = 0, c2: UInt64 = 0, c3: UInt64 = 0
    static let width = 4

    @inline(__always)
    init(_ fields: [EventField], _ r: RecordFields) {
        let n = fields.count
        if n > 0 { c0 = FieldCode.code(fields[0], r) }
        if n > 1 { c1 = FieldCode.code(fields[1], r) }
        if n > 2 { c2 = FieldCode.code(fields[2], r) }
        if n > 3 { c3 = FieldCode.code(fields[3], r) }
    }

    subscript(i: Int) -> UInt64 { i == 0 ? c0 : i == 1 ? c1 : i == 2 ? c2 : c3 }

    @inline(__always)
    var hash: UInt64 {
        var h = c0 &* 0x9E37_79B9_7F4A_7C15
        h = (h ^ (h >> 29) ^ c1) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ (h >> 31) ^ c2) &* 0x94D0_49BB_1331_11EB
        h = (h ^ (h >> 29) ^ c3) &* 0x9E37_79B9_7F4A_7C15
        return h ^ (h >> 32)
    }
}

/// Open addressing from ``CodeKey`` to a value, with a multiplicative hash (a `Dictionary` would run SipHash
/// on 32 bytes per event). Entries are kept in insertion order.
struct CodeTable<V> {
    private(set) var keys: [CodeKey] = []
    var values: [V] = []
    private var slots: [Int32]
    private var mask: Int

    init() {
        slots = [Int32](repeating: -1, count: 64)
        mask = 63
    }

    /// The entry of `key`, appended with `make()` when new.
    @inline(__always)
    mutating func entry(_ key: CodeKey, _ make: () -> V) -> Int {
        if let e = find(key) { return e }
        insert(key, make())
        return keys.count - 1
    }

    /// The entry of `key`, if any.
    @inline(__always)
    func find(_ key: CodeKey) -> Int? {
        var i = Int(truncatingIfNeeded: key.hash) & mask
        while true {
            let s = slots[i]
            if s < 0 { return nil }
            if keys[Int(s)] == key { return Int(s) }
            i = (i + 1) & mask
        }
    }

    /// Appends an entry for `key`, which must not be in the table.
    mutating func insert(_ key: CodeKey, _ value: V) {
        var i = Int(truncatingIfNeeded: key.hash) & mask
        while slots[i] >= 0 { i = (i + 1) & mask }
        slots[i] = Int32(truncatingIfNeeded: keys.count)
        keys.append(key)
        values.append(value)
        if keys.count * 2 > slots.count { grow() }
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        mask = slots.count - 1
        for (e, key) in keys.enumerated() {
            var i = Int(truncatingIfNeeded: key.hash) & mask
            while slots[i] >= 0 { i = (i + 1) & mask }
            slots[i] = Int32(truncatingIfNeeded: e)
        }
    }
}

/// A set of field codes (never ``FieldCode/absent``, which marks an empty slot): open addressing with a
/// multiplicative hash, for the distinct codes of a `count_distinct` (a `Set<Value>` hashed a string and paid a
/// retain and release per event: 2.3 s for `count_distinct(profile)` over 3.3 M events).
struct CodeSet {
    private var slots: [UInt64]
    private var mask: Int
    private(set) var count = 0

    init() {
        slots = [UInt64](repeating: FieldCode.absent, count: 16)
        mask = 15
    }

    /// Adds `code`, which must not be ``FieldCode/absent``.
    @inline(__always)
    mutating func insert(_ code: UInt64) {
        var i = Int(truncatingIfNeeded: (code &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
        while true {
            let s = slots[i]
            if s == code { return }
            if s == FieldCode.absent { break }
            i = (i + 1) & mask
        }
        slots[i] = code
        count += 1
        if count * 2 > slots.count { grow() }
    }

    /// Calls `body` with each code, in no particular order.
    func forEach(_ body: (UInt64) -> Void) {
        for s in slots where s != FieldCode.absent { body(s) }
    }

    private mutating func grow() {
        let old = slots
        slots = [UInt64](repeating: FieldCode.absent, count: old.count * 2)
        mask = slots.count - 1
        count = 0
        for s in old where s != FieldCode.absent { insert(s) }
    }
}
