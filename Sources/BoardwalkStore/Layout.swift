import BoardwalkCodec
import BoardwalkModel

/// The store's databases, key formats and constants. `docs/storage.md` describes them byte by byte.
///
/// Every integer in a key is big-endian, so LMDB's bytewise key order is numeric order. Times are
/// microseconds since the epoch with the sign bit flipped (`UInt64(bitPattern: t) ^ 1 << 63`), so that
/// times before 1970 (which the model does not produce, but a caller could) still sort first.
enum Layout {
    /// The format this code writes. A store whose `meta/format` is larger is refused at open.
    static let formatVersion: UInt32 = 1

    // Named databases.
    static let meta = "meta"
    static let events = "events"
    static let sessions = "sessions"
    static let onboardingSessions = "onboarding_sessions"
    static let batches = "batches"
    static let eventIDs = "event_ids"
    static let strings = "strings"
    static let stringIDs = "string_ids"
    static let inferred = "inferred_sessions"
    static let onboardings = "onboardings"
    static let checkpoints = "checkpoints"
    static let all = [meta, events, sessions, onboardingSessions, batches, eventIDs, strings, stringIDs, inferred,
                      onboardings, checkpoints]

    /// `events` key: onboarding id (4) ‖ screen index (2) ‖ time (8) ‖ seq (8).
    static let eventKeySize = 22
    /// `sessions` key: session id (4) ‖ time (8) ‖ seq (8); value: onboarding id (4) ‖ screen index (2).
    static let sessionKeySize = 20
    static let sessionValueSize = 6
    /// `onboarding_sessions` key: onboarding id (4) ‖ session id (4); value: time of its first event (8).
    static let onboardingSessionKeySize = 8
    /// Event keys per `batches` entry: one entry per this many events of a write transaction, so that a
    /// value stays a few pages long (large overflow values need long runs of contiguous free pages).
    static let batchChunk = 1024
    /// Event ids up to this many UTF-8 bytes are stored whole in `event_ids` keys (after the 8-byte time);
    /// longer ones keep a prefix and a 64-bit hash (see ``eventIDKey(time:id:into:)``).
    static let maxInlineKeyString = 400
    /// The inactivity gap that starts a new inferred session: 30 minutes (semantics rule 10).
    static let sessionGap: Int64 = 30 * 60 * 1_000_000

    // meta keys.
    static let metaFormat = "format"
    static let metaNextSeq = "next_seq"
    static let metaEvents = "events"
    static let metaDuplicates = "duplicates"
    static let metaInferredSessions = "inferred_sessions"
    static let metaMinTime = "min_time"
    static let metaMaxTime = "max_time"
    static func metaKind(_ kind: EventKind) -> String { "kind." + kind.rawValue }

    @inline(__always)
    static func timeBits(_ t: Int64) -> UInt64 { UInt64(bitPattern: t) ^ (1 << 63) }
    @inline(__always)
    static func time(fromBits b: UInt64) -> Int64 { Int64(bitPattern: b ^ (1 << 63)) }
}

/// Big-endian stores and loads on raw memory.
extension UnsafeMutableRawPointer {
    @inline(__always) func storeBE(_ v: UInt64, at o: Int) { storeBytes(of: v.bigEndian, toByteOffset: o, as: UInt64.self) }
    @inline(__always) func storeBE(_ v: UInt32, at o: Int) { storeBytes(of: v.bigEndian, toByteOffset: o, as: UInt32.self) }
    @inline(__always) func storeBE(_ v: UInt16, at o: Int) { storeBytes(of: v.bigEndian, toByteOffset: o, as: UInt16.self) }
}

extension UnsafeRawBufferPointer {
    @inline(__always) func be64(_ o: Int) -> UInt64 { UInt64(bigEndian: loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
    @inline(__always) func be32(_ o: Int) -> UInt32 { UInt32(bigEndian: loadUnaligned(fromByteOffset: o, as: UInt32.self)) }
    @inline(__always) func be16(_ o: Int) -> UInt16 { UInt16(bigEndian: loadUnaligned(fromByteOffset: o, as: UInt16.self)) }
}

/// The decoded fields of an `events` key.
struct EventKey: Hashable, Comparable {
    var onboarding: UInt32
    var screen: UInt16
    var timeBits: UInt64
    var seq: UInt64

    init(onboarding: UInt32, screen: UInt16, timeBits: UInt64, seq: UInt64) {
        self.onboarding = onboarding
        self.screen = screen
        self.timeBits = timeBits
        self.seq = seq
    }

    /// Reads a 22-byte key; `nil` when the size is wrong.
    init?(_ b: UnsafeRawBufferPointer) {
        guard b.count == Layout.eventKeySize else { return nil }
        onboarding = b.be32(0)
        screen = b.be16(4)
        timeBits = b.be64(6)
        seq = b.be64(14)
    }

    var time: Timestamp { Timestamp(microseconds: Layout.time(fromBits: timeBits)) }
    var header: RecordHeader { RecordHeader(time: time, keyOnboarding: onboarding, keyScreenIndex: screen) }

    @inline(__always)
    func write(to p: UnsafeMutableRawPointer) {
        p.storeBE(onboarding, at: 0)
        p.storeBE(screen, at: 4)
        p.storeBE(timeBits, at: 6)
        p.storeBE(seq, at: 14)
    }

    /// Calls `body` with the 22 key bytes.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: Layout.eventKeySize, alignment: 8) { buf in
            write(to: buf.baseAddress!)
            return try body(UnsafeRawBufferPointer(buf))
        }
    }

    static func < (a: EventKey, b: EventKey) -> Bool {
        (a.onboarding, a.screen, a.timeBits, a.seq) < (b.onboarding, b.screen, b.timeBits, b.seq)
    }
}

/// A 64-bit FNV-1a hash, for keys of strings too long to be keys themselves.
@inline(__always)
func fnv1a(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
    return h
}

extension Layout {
    /// Writes the `string_ids` key of a string's UTF-8 bytes into `out` (room for 512 bytes); returns its size.
    ///
    /// Strings of 1 to ``maxInlineKeyString`` bytes are their own key. A longer string becomes its first
    /// ``maxInlineKeyString`` bytes, a `0xFF` byte and the FNV-1a hash of all its bytes; the empty string
    /// (LMDB has no empty keys) is the single byte `0xFF`. `0xFF` never occurs in UTF-8, so neither can
    /// equal another string's key.
    static func stringKey(_ s: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) -> Int {
        if s.count == 0 {
            out.storeBytes(of: 0xFF, as: UInt8.self)
            return 1
        }
        if s.count <= maxInlineKeyString {
            if s.count > 0 { out.copyMemory(from: s.baseAddress!, byteCount: s.count) }
            return s.count
        }
        out.copyMemory(from: s.baseAddress!, byteCount: maxInlineKeyString)
        out.storeBytes(of: 0xFF, toByteOffset: maxInlineKeyString, as: UInt8.self)
        out.storeBE(fnv1a(s), at: maxInlineKeyString + 1)
        return maxInlineKeyString + 9
    }

    /// The first 8 bytes of `s`'s string key (``stringKey(_:into:)``) as a big-endian integer, zero-padded:
    /// ordering by it orders keys by their first 8 bytes.
    static func keyPrefix(_ s: UnsafeRawBufferPointer) -> UInt64 {
        if s.count == 0 { return 0xFF << 56 }
        var v: UInt64 = 0
        let n = min(8, s.count)
        for i in 0..<n { v |= UInt64(s[i]) << UInt64(56 - 8 * i) }
        return v
    }

    /// Writes the `event_ids` key (time bits ‖ string key of the id) into `out` (room for 512 bytes).
    static func eventIDKey(timeBits: UInt64, id: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) -> Int {
        out.storeBE(timeBits, at: 0)
        return 8 + stringKey(id, into: out + 8)
    }
}

extension String {
    /// Calls `body` with the string's UTF-8 bytes, without copying when the string is native.
    @inline(__always) @discardableResult
    func withUTF8Bytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let r = try utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) { return r }
        var copy = self
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}
