import BoardwalkCodec
import BoardwalkModel
import BoardwalkStore

/// A stored event as an ``EventRow`` read through the codec's `RecordFields`: the fields of
/// ``EventField/isLean`` only, strings through the scan's ``SnapshotStrings``. Valid only inside the scan callback
/// that received it. The executor hands it only to queries that read no other field (``Plan/leanEvents``).
struct StoreFieldsRow: EventRow {
    let fields: RecordFields
    let seq: UInt64
    // Not retained: a row lives inside the scan that owns the cache (its maker keeps the cache alive: the scans
    // here, `readSessions`, `CodedCountScan`) and is never stored past it; a session's rows are copied
    // several times each (into the session's array, by the dwell computation, by the executor): a retain and a
    // release per copy were a tenth of a dwell query.
    unowned(unsafe) let strings: SnapshotStrings

    init(fields: RecordFields, seq: UInt64, strings: SnapshotStrings) {
        self.fields = fields
        self.seq = seq
        self.strings = strings
    }

    var time: Timestamp { fields.time }
    var kind: EventKind { fields.kind }
    var screenIndex: Int? { fields.screenIndex }
    var analyticsName: String? {
        switch fields.analyticsName {
        case .known(let name)?: name.rawValue
        case .unknown(let id)?: strings.string(id)
        case nil: nil
        }
    }

    /// The value of a lean field, as ``StoreEventRow/value(_:)`` gives it; absent for the fields `RecordFields`
    /// does not read (a query reading them never gets this row).
    func value(_ field: EventField) -> Value {
        // One mapping from record to value for this row and for counts by field codes.
        if FieldCode.has(field) { return FieldCode.value(field, FieldCode.code(field, fields), strings: strings) }
        switch field {
        case .time: return .time(fields.time)
        case .seq: return .integer(Int64(bitPattern: seq))
        case .totalScreens: return fields.totalScreens.map { .integer(Int64($0)) } ?? .null
        default:
            assertionFailure("\(field.rawValue) is not read by RecordFields: the plan must not take the lean path")
            return .null
        }
    }
}
