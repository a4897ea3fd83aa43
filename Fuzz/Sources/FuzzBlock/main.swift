import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
import FuzzSupport

/// Event-block (and block-head), session-bucket, string-chunk and session-pair-chunk readers: untrusted bytes must read or throw (never trap), and whatever
/// reads must obey the format's rules and survive being built again (a block byte for byte). The first 17 bytes of
/// the input are the key's fields (time, seq, and a selector byte), all 64 bits of each so the readers'
/// overflow guards near `Int64.max` and `UInt64.max` are reached; the rest is the value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBlock(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 17 else { return 0 }
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    let time = Int64(bitPattern: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
    let seq = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
    let value = UnsafeRawBufferPointer(rebasing: raw[17...])
    switch raw[16] % 4 {
    case 0: checkBlock(value, time: time, seq: seq)
    case 1: checkBucket(value, keySeq: seq)
    case 2: checkStringChunk(value)
    default: checkSessionPairChunk(value, firstSession: UInt32(truncatingIfNeeded: seq))
    }
    return 0
}

/// `payload` behind the checksum that makes it pass under an empty name (``StoredChecksum``).
func sealed(_ payload: UnsafeRawBufferPointer) -> [UInt8] {
    var value = [UInt8](repeating: 0, count: StoredChecksum.size) + Array(payload)
    value.withUnsafeMutableBytes { StoredChecksum.seal($0, seed: CRC32C()) }
    return value
}

/// The input is the header's length (a byte), the header and the events: the checksums that make them pass go in
/// front (the block's, then the header's, over the bytes the length says), so that the fuzzer explores the parser
/// rather than the checksums (which any change fails).
func checkBlock(_ payload: UnsafeRawBufferPointer, time: Int64, seq: UInt64) {
    guard let length = payload.first else { return }
    let rest = UnsafeRawBufferPointer(rebasing: payload[1...])
    let split = min(Int(length), rest.count)
    let header = sealed(UnsafeRawBufferPointer(rebasing: rest[..<split]))
    let block = header + Array(rest[split...])
    block.withUnsafeBytes { b in sealed(b).withUnsafeBytes { checkSealedBlock($0, time: time, seq: seq) } }
}

func checkSealedBlock(_ bytes: UnsafeRawBufferPointer, time: Int64, seq: UInt64) {
    // The bytes as a block's head (what `block_heads` holds): they read or throw.
    _ = try? EventBlockHeader(head: bytes, firstTime: time, firstSeq: seq, checksumSeed: CRC32C())
    var events: [(Int64, UInt64, [UInt8])] = []
    do throws(CodecError) {
        var reader = try EventBlockReader(bytes, firstTime: time, firstSeq: seq, checksumSeed: CRC32C())
        // A block that opens has a head, its bytes up to the first event, that reads as the same header.
        let header = reader.header
        guard
            let head = try? EventBlockHeader(
                head: UnsafeRawBufferPointer(rebasing: bytes[..<header.eventsStart]), firstTime: time, firstSeq: seq,
                checksumSeed: CRC32C()),
            head.count == header.count, head.lastTime == header.lastTime, head.minSeq == header.minSeq,
            head.maxSeq == header.maxSeq, head.eventsStart == header.eventsStart,
            Array(head.kindCounts.map { [UInt64($0.code), UInt64($0.name), UInt64($0.count)] })
                == Array(header.kindCounts.map { [UInt64($0.code), UInt64($0.name), UInt64($0.count)] })
        else { fuzzFailure("the head of a block that opens does not read as its header") }
        while try reader.next() {
            if let last = events.last, !(last.0 < reader.time || (last.0 == reader.time && last.1 < reader.seq)) {
                fuzzFailure("block events out of order")
            }
            events.append((reader.time, reader.seq, Array(reader.body)))
        }
    } catch {
        if error.offset < 0 || error.offset > bytes.count {
            fuzzFailure("error offset \(error.offset) outside the value")
        }
        return
    }
    // The reader checks that the kind counts add up, not that they are the events' kinds (the store's check() reads
    // every record for that): only a block whose counts are its events' kinds is the one a builder writes.
    var codes: [UInt64: Int] = [:]
    for (_, _, body) in events {
        let kind = body.withUnsafeBytes { RecordFormat.kindCode(body: $0) }
        codes[UInt64(kind.code) << 32 | UInt64(kind.name), default: 0] += 1
    }
    let counted = (try? EventBlockReader(bytes, firstTime: time, firstSeq: seq, checksumSeed: CRC32C()))
        .map {
            Dictionary(uniqueKeysWithValues: $0.kindCounts.map { (UInt64($0.code) << 32 | UInt64($0.name), $0.count) })
        }
    guard counted == codes else { return }
    var builder = EventBlockBuilder(capacity: 16)
    builder.start(time: time, seq: seq)
    for (t, s, body) in events { body.withUnsafeBytes { builder.append(time: t, seq: s, body: $0) } }
    // A block that reads is canonical (every varint shortest, the header exact), so it rebuilds identically.
    guard builder.withBlock(checksumSeed: CRC32C(), { $0.elementsEqual(bytes) }) else {
        fuzzFailure("a block that reads does not rebuild identically")
    }
}

func checkBucket(_ bytes: UnsafeRawBufferPointer, keySeq: UInt64) {
    // (segment, low, onboarding, screen, time, seq) of every entry that reads.
    var entries: [(Int, UInt32, UInt32, UInt16, Int64, UInt64)] = []
    do throws(CodecError) {
        var reader = try SessionBucketReader(bytes, keySeq: keySeq, lowLimit: 64)
        while try reader.nextRun() {
            if reader.low >= 64 { fuzzFailure("a run's low bits pass the limit") }
            while try reader.nextEntry() {
                if let last = entries.last, last.0 == reader.segments - 1, last.1 == reader.low,
                    !(last.4 < reader.time || (last.4 == reader.time && last.5 < reader.seq))
                {
                    fuzzFailure("run entries out of order")
                }
                entries.append(
                    (reader.segments - 1, reader.low, reader.onboarding, reader.screen, reader.time, reader.seq))
            }
        }
    } catch {
        if error.offset < 0 || error.offset > bytes.count {
            fuzzFailure("error offset \(error.offset) outside the value")
        }
        return
    }
    // Rebuild segment by segment, each appended to the bytes before it, and read back. Not byte-identical (a
    // segment's base may differ from its first entry, an onboarding may be spelt id + 1 where 0 was possible);
    // the builder keys a value at most at its segments' first seqs and keeps runs under 16 KiB, so other values
    // are not rebuilt.
    guard bytes.count < 2_000, !entries.isEmpty else { return }  // at most 500 entries: a run stays under 16 KiB
    var firsts: [Int: UInt64] = [:]
    for e in entries where firsts[e.0] == nil { firsts[e.0] = e.5 }
    guard firsts.values.allSatisfy({ $0 >= keySeq }) else { return }
    var builder = SessionBucketBuilder(prefixRoom: 4 * bytes.count + 1024, capacity: 64)
    var value: [UInt8] = []
    var i = 0
    while i < entries.count {
        let segment = entries[i].0
        builder.reset()
        while i < entries.count && entries[i].0 == segment {
            let e = entries[i]
            builder.append(low: e.1, onboarding: e.2, screen: e.3, time: e.4, seq: e.5)
            i += 1
        }
        value = value.withUnsafeBytes { prefix in builder.withValue(keySeq: keySeq, prefix: prefix) { Array($0) } }
    }
    var again: [(Int, UInt32, UInt32, UInt16, Int64, UInt64)] = []
    value.withUnsafeBytes { raw in
        do throws(CodecError) {
            var reader = try SessionBucketReader(raw, keySeq: keySeq, lowLimit: 64)
            while try reader.nextRun() {
                while try reader.nextEntry() {
                    again.append(
                        (reader.segments - 1, reader.low, reader.onboarding, reader.screen, reader.time, reader.seq))
                }
            }
        } catch {
            fuzzFailure("a rebuilt session bucket value does not read: \(error)")
        }
    }
    guard again.elementsEqual(entries, by: { $0 == $1 }) else {
        fuzzFailure("a rebuilt session bucket value reads differently")
    }
}

/// The input is a chunk's count and strings, sealed with the checksum that makes it pass (as ``checkBlock(_:time:seq:)``).
func checkStringChunk(_ payload: UnsafeRawBufferPointer) {
    sealed(payload).withUnsafeBytes { checkSealedStringChunk($0) }
}

func checkSealedStringChunk(_ bytes: UnsafeRawBufferPointer) {
    // Each string as the bytes it stands for (a UUID entry formatted back), and whether the entry matches them.
    var strings: [[UInt8]] = []
    do throws(CodecError) {
        var reader = try StringChunkReader(bytes, checksumSeed: CRC32C())
        while let entry = try reader.next() {
            let utf8: [UInt8]
            switch entry {
            case .utf8(let b): utf8 = Array(b)
            case .uuid: utf8 = Array(entry.string.utf8)
            }
            if !utf8.withUnsafeBytes({ entry.matches($0) }) {
                fuzzFailure("a chunk entry does not match its own bytes")
            }
            strings.append(utf8)
        }
        if strings.count != reader.count { fuzzFailure("a chunk read \(strings.count) strings of \(reader.count)") }
    } catch {
        if error.offset < 0 || error.offset > bytes.count {
            fuzzFailure("error offset \(error.offset) outside the value")
        }
        return
    }
    // The same strings built again read back byte for byte (a string that looks like a UUID may change form).
    var builder = StringChunkBuilder(capacity: 16)
    for s in strings { s.withUnsafeBytes { builder.append($0) } }
    var again: [[UInt8]] = []
    builder.withValue(checksumSeed: CRC32C()) { value in
        do throws(CodecError) {
            var reader = try StringChunkReader(value, checksumSeed: CRC32C())
            while let entry = try reader.next() {
                switch entry {
                case .utf8(let b): again.append(Array(b))
                case .uuid: again.append(Array(entry.string.utf8))
                }
            }
        } catch {
            fuzzFailure("a rebuilt string chunk does not read: \(error)")
        }
    }
    if again != strings { fuzzFailure("a rebuilt string chunk reads differently") }
}

func checkSessionPairChunk(_ bytes: UnsafeRawBufferPointer, firstSession: UInt32) {
    var entries: [(session: UInt32, time: UInt64)] = []
    do throws(CodecError) {
        var reader = try SessionPairChunkReader(bytes, firstSession: firstSession)
        while let entry = try reader.next() {
            if let last = entries.last, entry.session <= last.session {
                fuzzFailure("session pair chunk entries out of order")
            }
            entries.append(entry)
        }
        if entries.first?.session != firstSession { fuzzFailure("a session pair chunk does not start at its key") }
        if entries.count != reader.count { fuzzFailure("a chunk read \(entries.count) entries of \(reader.count)") }
    } catch {
        if error.offset < 0 || error.offset > bytes.count {
            fuzzFailure("error offset \(error.offset) outside the value")
        }
        return
    }
    // Built again, the entries come back the same and the value is the same bytes (the encoding is canonical
    // once every varint is in its shortest form, which the reader requires).
    var builder = SessionPairChunkBuilder(capacity: 16)
    for (i, e) in entries.enumerated() {
        if i == 0 {
            builder.reset(firstSession: e.session, time: e.time)
        } else {
            builder.append(session: e.session, time: e.time)
        }
    }
    builder.withValue { value in
        if !value.elementsEqual(bytes) { fuzzFailure("a rebuilt session pair chunk differs from the bytes read") }
    }
}
