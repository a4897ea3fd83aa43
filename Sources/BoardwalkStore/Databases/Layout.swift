import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

/// The store's databases, key formats and constants. `docs/storage.md` describes them byte by byte.
///
/// Every integer in a key is big-endian, so LMDB's bytewise key order is numeric order. Times are
/// microseconds since the epoch with the sign bit flipped (`UInt64(bitPattern: t) ^ 1 << 63`), so that
/// times before 1970 (which the model does not produce, but a caller could) still sort first.
enum Layout {
    /// The format this code writes (docs/storage.md, "The format on disk"). A store whose `meta/format` is larger is
    /// refused at open, one whose format is smaller too, with what set its layout apart (``formerLayout(of:)``) and the
    /// commands that convert it: exported by the Boardwalk that wrote it, then ingested again.
    static let formatVersion: UInt32 = 14

    /// What set an older format apart, for the message refusing it.
    static func formerLayout(of format: UInt32) -> String {
        switch format {
        case 1: "one entry per event"
        case 2: "blocks never grown after their batch"
        case 3: "one session list per session and batch"
        case 4: "one strings entry per string"
        case 5: "one onboarding_sessions entry per pair"
        case 6: "blocks of at most one page and four hours"
        case 7: "a session index without a log, grown in place by every batch"
        case 8: "blocks without a log, grown in place by every batch"
        case 9: "event blocks without checksums"
        case 10: "string chunks without checksums"
        case 11: "no session_names index, and no checksums on the values of the session index, batches and meta"
        case 12: "event blocks without kind counts in their headers"
        default: "no block_heads copy of the event blocks' headers"
        }
    }

    // Named databases.
    static let meta = "meta"
    static let events = "events"
    static let sessions = "sessions"
    static let onboardingSessions = "onboarding_sessions"
    static let batches = "batches"
    static let strings = "strings"
    static let inferred = "inferred_sessions"
    static let onboardings = "onboardings"
    static let checkpoints = "checkpoints"
    static let spanningSessions = "spanning_sessions"
    static let sessionLog = "session_log"
    static let eventLog = "event_log"
    static let sessionNames = "session_names"
    static let blockHeads = "block_heads"
    /// The databases whose values the store seals (SealedValues.swift): all but those whose values carry a checksum
    /// in their own format (event blocks, string chunks, `session_names` chunks).
    static let sealed: Set<String> = [
        meta, sessions, onboardingSessions, batches, inferred, onboardings, checkpoints, spanningSessions, sessionLog,
    ]
    static let all = [
        meta, events, sessions, onboardingSessions, batches, strings, inferred, onboardings, checkpoints,
        spanningSessions, sessionLog, eventLog, sessionNames, blockHeads,
    ]

    /// `events` key: onboarding id (4) ‖ screen index (2) ‖ time of the block's first event (8) ‖ its seq (8);
    /// value: an event block (codec `EventBlockBuilder`).
    static let eventKeySize = 22
    /// `event_log` key: seq of the batch's first event (8) ‖ the block's `events` key (22); value: an event block,
    /// as in `events`.
    static let eventLogKeySize = 30
    /// `sessions` key: session bucket (4: the session id shifted right by ``sessionBucketShift``) ‖ seq (8) of
    /// the value's first entry; value: a session-bucket value (codec `SessionBucketBuilder`), whose runs carry
    /// the sessions' low bits.
    static let sessionKeySize = 12
    /// Session ids per bucket: 2^``sessionBucketShift`` = 64 (docs/storage.md, "Session-bucket value").
    static let sessionBucketShift: UInt32 = 6
    static let sessionBucketWidth: UInt32 = 1 << sessionBucketShift
    /// A fold of the session log grows a bucket's newest value by later batches' segments while old and new bytes
    /// fit in this many; one batch's references of a bucket are cut into several segments past it. Values stay
    /// well inside a leaf page (an LMDB node of up to about half a page is stored inline).
    static let sessionValueTarget = 768
    /// `session_log` key: seq of the batch's first event (8) ‖ the chunk's first bucket (4); value: a session-log
    /// chunk (codec `SessionLogChunkBuilder`): the batch's segments of the buckets from that one on, in bucket order.
    static let sessionLogKeySize = 12
    /// A batch's log entries are cut into chunks of at most this many bytes: what one overflow page holds on 4 KiB
    /// pages, so that a chunk is one page and a reader looking for one bucket reads one page per batch. A chunk
    /// holds whole buckets (all of a bucket's segments of the batch), so one with many references passes the target.
    static let sessionLogChunkTarget = 4_080
    /// A batch's new strings are cut into `strings` chunks of at most this many bytes (a longer string gets a chunk
    /// of its own): a few chunks per leaf page, and one put per 59 UUIDs (17 bytes each) instead of one per string.
    static let stringChunkTarget = 1_024
    /// `onboarding_sessions` key: onboarding id (4) ‖ the chunk's first session id (4); value: a session pair chunk
    /// (codec `SessionPairChunkBuilder`: the onboarding's sessions from that one on, each with the time of its
    /// first stored event).
    static let onboardingSessionKeySize = 8
    /// The writer keeps each `onboarding_sessions` chunk within this many bytes: about 100 sessions (4 bytes each
    /// when new sessions arrive close together), several chunks per leaf page, and a pair looked up by decoding
    /// at most one chunk.
    static let sessionPairChunkTarget = 512
    /// `batches` key: seq of the batch's first event (8) ‖ chunk number (2); value: the batch's event count
    /// (4) ‖ up to ``batchChunk`` block keys (22 bytes each).
    static let batchKeySize = 10
    static let batchChunk = 256
    /// The widest time span of one block, in microseconds (12 hours): events of a group at least this far
    /// after the block's first event start a new block. A scan from time `t` seeks to `t - blockSpan + 1`:
    /// no block that starts earlier holds an event at `t` or later. Twelve hours rather than four lets a
    /// group that gets a few dozen events per hour fill two pages before its block is sealed, which halves the
    /// blocks a scan of such an onboarding reads (docs/storage.md, "Why it is built this way"); the price is a time-range scan
    /// that looks at the block headers of the twelve hours before its start instead of four.
    static let blockSpan: Int64 = 12 * 3_600_000_000
    /// The size at which a block is sealed: what two LMDB overflow pages hold (two pages less the first one's
    /// 16-byte header), 8 176 bytes on 4 KiB pages. A value larger than about half a page is stored on
    /// overflow pages, which are whole and contiguous: a block sealed just under two pages fills them, and the
    /// leaf then holds only its key and page number. A single event larger than this gets a block of its own.
    /// Two pages rather than one (format 6) halve the reads of a scan whose blocks lie apart in the file (one
    /// `pread` or page fault each, about 1 µs plus 0.1 µs per KiB here), at the cost of rewriting up to two pages
    /// when a fold of the event log grows a group's newest block (docs/storage.md, "Why it is built this way").
    static func blockTarget(pageSize: Int) -> Int { 2 * pageSize - 16 }
    /// The most events a block can hold: a block is sealed before passing ``blockTarget(pageSize:)``
    /// (two pages of at most 64 KiB) unless it holds one event, and each event takes at least three bytes.
    static let maxBlockEvents = (128 << 10) / 3 + 1
    /// The longest checkpoint key, in UTF-8 bytes.
    static let maxInlineKeyString = 400
    /// The inactivity gap that starts a new inferred session: 30 minutes (semantics rule 10).
    static let sessionGap: Int64 = 30 * 60 * 1_000_000

    // meta keys.
    static let metaFormat = "format"
    static let metaNextSeq = "next_seq"
    static let metaEvents = "events"
    static let metaDuplicates = "duplicates"
    /// Distinct sessions (explicit and inferred): a session counts once however many onboardings it spans.
    static let metaSessions = "sessions"
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
    @inline(__always) func storeBE(_ v: UInt64, at o: Int) {
        storeBytes(of: v.bigEndian, toByteOffset: o, as: UInt64.self)
    }
    @inline(__always) func storeBE(_ v: UInt32, at o: Int) {
        storeBytes(of: v.bigEndian, toByteOffset: o, as: UInt32.self)
    }
    @inline(__always) func storeBE(_ v: UInt16, at o: Int) {
        storeBytes(of: v.bigEndian, toByteOffset: o, as: UInt16.self)
    }
}

extension UnsafeRawBufferPointer {
    @inline(__always) func be64(_ o: Int) -> UInt64 {
        UInt64(bigEndian: loadUnaligned(fromByteOffset: o, as: UInt64.self))
    }
    @inline(__always) func be32(_ o: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: o, as: UInt32.self))
    }
    @inline(__always) func be16(_ o: Int) -> UInt16 {
        UInt16(bigEndian: loadUnaligned(fromByteOffset: o, as: UInt16.self))
    }
}

/// The decoded fields of an `events` key: a block's group and its first event's time and seq.
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

    /// The checksum of the key's 22 bytes, which the checksum of the block stored under it continues (in `events`
    /// and, after the batch's seq, in `event_log`): a block read under another key fails its check.
    @inline(__always)
    var checksumSeed: CRC32C {
        withUnsafeTemporaryAllocation(byteCount: Layout.eventKeySize, alignment: 8) { bytes in
            write(to: bytes.baseAddress!)
            return CRC32C(UnsafeRawBufferPointer(bytes))
        }
    }

    /// Reads a 30-byte `event_log` key: the batch's first seq and the block's key; `nil` when the size is wrong.
    static func logKey(_ b: UnsafeRawBufferPointer) -> (batch: UInt64, key: EventKey)? {
        guard b.count == Layout.eventLogKeySize, let key = EventKey(UnsafeRawBufferPointer(rebasing: b[8...])) else {
            return nil
        }
        return (b.be64(0), key)
    }

    /// Writes the 30-byte `event_log` key: the first seq of `batch`, then this key.
    @inline(__always)
    func write(to p: UnsafeMutableRawPointer, batch: UInt64) {
        p.storeBE(batch, at: 0)
        write(to: p + 8)
    }

    /// Calls `body` with the 30 `event_log` key bytes of this key under `batch`.
    @inline(__always)
    func withLogBytes<R>(batch: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: Layout.eventLogKeySize, alignment: 8) { buf in
            write(to: buf.baseAddress!, batch: batch)
            return try body(UnsafeRawBufferPointer(buf))
        }
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

extension String {
    /// Calls `body` with the string's UTF-8 bytes, without copying when the string is native.
    @inline(__always) @discardableResult
    func withUTF8Bytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let r = try utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) { return r }
        var copy = self
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}
