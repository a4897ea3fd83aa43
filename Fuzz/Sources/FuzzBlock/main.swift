import BoardwalkCodec
import BoardwalkModel
import FuzzSupport

/// Event-block and session-list readers: untrusted bytes must read or throw (never trap), and whatever
/// reads must obey the format's rules and survive being built again byte for byte. The first 17 bytes of
/// the input are the key's fields (time, seq, and a selector byte), all 64 bits of each so the readers'
/// overflow guards near `Int64.max` and `UInt64.max` are reached; the rest is the value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBlock(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 17 else { return 0 }
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    let time = Int64(bitPattern: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
    let seq = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
    let value = UnsafeRawBufferPointer(rebasing: raw[17...])
    if raw[16] & 1 == 0 { checkBlock(value, time: time, seq: seq) } else { checkList(value, time: time, seq: seq) }
    return 0
}

func checkBlock(_ bytes: UnsafeRawBufferPointer, time: Int64, seq: UInt64) {
    var events: [(Int64, UInt64, [UInt8])] = []
    do throws(CodecError) {
        var reader = try EventBlockReader(bytes, firstTime: time, firstSeq: seq)
        while try reader.next() {
            if let last = events.last, !(last.0 < reader.time || (last.0 == reader.time && last.1 < reader.seq)) {
                fuzzFailure("block events out of order")
            }
            events.append((reader.time, reader.seq, Array(reader.body)))
        }
    } catch {
        if error.offset < 0 || error.offset > bytes.count { fuzzFailure("error offset \(error.offset) outside the value") }
        return
    }
    var builder = EventBlockBuilder(capacity: 16)
    builder.start(time: time, seq: seq)
    for (t, s, body) in events { body.withUnsafeBytes { builder.append(time: t, seq: s, body: $0) } }
    // A block that reads is canonical (every varint shortest, the header exact), so it rebuilds identically.
    guard builder.withBlock({ $0.elementsEqual(bytes) }) else { fuzzFailure("a block that reads does not rebuild identically") }
}

func checkList(_ bytes: UnsafeRawBufferPointer, time: Int64, seq: UInt64) {
    var entries: [(UInt32, UInt16, Int64, UInt64)] = []
    do throws(CodecError) {
        var reader = try SessionListReader(bytes, firstTime: time, firstSeq: seq)
        while try reader.next() { entries.append((reader.onboarding, reader.screen, reader.time, reader.seq)) }
    } catch {
        if error.offset < 0 || error.offset > bytes.count { fuzzFailure("error offset \(error.offset) outside the value") }
        return
    }
    var builder = SessionListBuilder(capacity: 16)
    builder.start(time: time, seq: seq)
    for (o, s, t, q) in entries { builder.append(onboarding: o, screen: s, time: t, seq: q) }
    // Not always byte-identical: an entry may spell its onboarding as id + 1 where "same as before" (0)
    // was possible. It must read back the same entries.
    let again: [(UInt32, UInt16, Int64, UInt64)] = builder.withList { list in
        var out: [(UInt32, UInt16, Int64, UInt64)] = []
        do throws(CodecError) {
            var reader = try SessionListReader(list, firstTime: time, firstSeq: seq)
            while try reader.next() { out.append((reader.onboarding, reader.screen, reader.time, reader.seq)) }
        } catch {
            fuzzFailure("a rebuilt session list does not read: \(error)")
        }
        return out
    }
    guard again.elementsEqual(entries, by: { $0 == $1 }) else { fuzzFailure("a rebuilt session list reads differently") }
}
