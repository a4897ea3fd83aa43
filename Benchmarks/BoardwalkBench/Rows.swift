// The rows the raw-LMDB and SQLite peers write: the store's keys and values (docs/storage.md), computed
// before timing so the peers measure only their database. Ids are interned in first-seen order by the
// codec's string table, as the store interns them.
import BoardwalkCodec
import BoardwalkModel

/// Events as the store's `events` and `sessions` databases hold them, keys as bytes.
struct Rows {
    /// Interned onboarding id, screen index, time (µs), arrival sequence number and interned session id.
    var onboarding: [UInt32] = []
    var screen: [UInt16] = []
    var time: [Int64] = []
    var seq: [UInt64] = []
    var session: [UInt32] = []
    /// `events` keys, back to back: onboarding u32 ‖ screen u16 ‖ time u64 ‖ seq u64, big-endian, the
    /// time's sign bit flipped so that signed order is byte order.
    var eventKeys: [UInt8] = []
    /// `sessions` keys: session u32 ‖ time u64 ‖ seq u64. Their value is the event key's first 6 bytes
    /// (onboarding ‖ screen).
    var sessionKeys: [UInt8] = []
    /// Record bodies back to back (the codec's body: time, onboarding and screen live in the key), and
    /// where each starts (count + 1 offsets).
    var values: [UInt8] = []
    var valueOffsets: [Int] = [0]

    static let eventKeySize = 22
    static let sessionKeySize = 20
    static let sessionValueSize = 6

    var count: Int { time.count }

    init(codec events: [Event]) throws {
        var strings = StringTable()
        var encoder = RecordEncoder()
        eventKeys.reserveCapacity(events.count * Rows.eventKeySize)
        sessionKeys.reserveCapacity(events.count * Rows.sessionKeySize)
        values.reserveCapacity(events.count * 32)
        for (i, e) in events.enumerated() {
            encoder.removeAll()
            let record = try encoder.appendBody(e, strings: &strings)
            let o = record.header.keyOnboarding
            let sc = record.header.keyScreenIndex
            let s = record.session ?? RecordFormat.absent
            let t = UInt64(bitPattern: e.time.microseconds) ^ (1 << 63)
            let q = UInt64(i)
            onboarding.append(o); screen.append(sc); time.append(e.time.microseconds); seq.append(q); session.append(s)
            appendBigEndian(&eventKeys, o)
            appendBigEndian(&eventKeys, sc)
            appendBigEndian(&eventKeys, t)
            appendBigEndian(&eventKeys, q)
            appendBigEndian(&sessionKeys, s)
            appendBigEndian(&sessionKeys, t)
            appendBigEndian(&sessionKeys, q)
            values.append(contentsOf: encoder.bytes)
            valueOffsets.append(values.count)
        }
    }
}

@inline(__always)
func appendBigEndian<T: FixedWidthInteger>(_ out: inout [UInt8], _ value: T) {
    var v = value.bigEndian
    withUnsafeBytes(of: &v) { out.append(contentsOf: $0) }
}
