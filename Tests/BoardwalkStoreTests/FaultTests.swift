import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
import Foundation
import Testing

@testable import BoardwalkStore

/// The fixture executable, built next to the test bundle (it is a dependency of this test target).
func fixturePath() throws -> String {
    let exe = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    var dir = exe.deletingLastPathComponent()
    // On Linux the bundle is an executable in .build/<triple>/<config>/; elsewhere it may be nested deeper.
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent("boardwalk-store-fixture").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    throw StoreError(.invalidArgument, "boardwalk-store-fixture not found near \(exe.path)")
}

@Suite struct FaultTests {
    /// A child appends batches in a loop and acknowledges each one after its commit returns; it is
    /// SIGKILLed at random moments. After every kill the store opens, `check()` passes, every acknowledged
    /// batch is there whole, and no batch is there in part.
    @Test func killedWritersLoseNoAcknowledgedBatchAndLeaveNoPartialOne() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let ackFile = dir + "-acks"
        defer { try? FileManager.default.removeItem(atPath: ackFile) }
        let fixture = try fixturePath()
        let batchSize = 100
        var rng = SystemRandomNumberGenerator()
        var killedWithProgress = 0
        var lastAcked = -1
        for round in 0..<20 {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: fixture)
            // A tiny initial map on some rounds, so kills also land during map growth.
            child.arguments = ["append", dir, ackFile, String(batchSize), String(round % 2 == 0 ? 1 << 16 : 64 << 20)]
            let ackedBefore = (try? FileManager.default.attributesOfItem(atPath: ackFile)[.size] as? Int) ?? 0
            try child.run()
            // Wait until the child has committed a batch in this round (so that it is inside its append
            // loop, not still starting up), then kill it a random moment later.
            let deadline = ContinuousClock.now + .seconds(20)
            while ((try? FileManager.default.attributesOfItem(atPath: ackFile)[.size] as? Int) ?? 0) <= ackedBefore,
                ContinuousClock.now < deadline, child.isRunning
            {
                usleep(1_000)
            }
            usleep(UInt32.random(in: 0...60_000, using: &rng))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            #expect(
                child.terminationReason == .uncaughtSignal,
                "round \(round): the child exited by itself (\(child.terminationStatus))")

            let acked = Set(
                (try String(contentsOfFile: ackFile, encoding: .utf8)).split(separator: "\n").map { Int($0)! })
            let store = try Store.open(at: dir)
            let report = try store.check()
            #expect(report.isOK, "round \(round): \(report)")
            var perBatch: [Int: Int] = [:]
            try store.read { s throws in
                for stored in try s.allEvents() {
                    let id = stored.event.eventID!
                    let batch = Int(id.dropFirst().prefix { $0 != "-" })!
                    perBatch[batch, default: 0] += 1
                }
            }
            for b in acked {
                #expect(
                    perBatch[b] == batchSize, "round \(round): acknowledged batch \(b) has \(perBatch[b] ?? 0) events")
            }
            for (b, n) in perBatch { #expect(n == batchSize, "round \(round): batch \(b) is partial (\(n) events)") }
            // Batches are numbered consecutively from the checkpoint, so the present ones are 0...max.
            #expect(Set(perBatch.keys) == Set(0..<perBatch.count), "round \(round): batches present are not contiguous")
            let maxAcked = acked.max() ?? -1
            if maxAcked > lastAcked { killedWithProgress += 1 }
            lastAcked = maxAcked
            store.close()
        }
        // Every round waited for a commit before killing: the child was killed inside its append loop.
        #expect(killedWithProgress == 20, "only \(killedWithProgress) of 20 rounds made progress")
    }

    /// Readers in another process keep querying while this process appends (and grows the map from a
    /// tiny start); every snapshot they take is self-consistent and the counts never go down.
    @Test func readersInAnotherProcessSeeOnlyGrowingConsistentCounts() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(initialMapSize: 1 << 16))
        try store.append([simpleEvent(onboarding: 0, screen: 0, session: 0, time: 0)])
        let batches = 60
        let batchSize = 500
        let target = 1 + batches * batchSize
        let child = Process()
        child.executableURL = URL(fileURLWithPath: try fixturePath())
        child.arguments = ["read", dir, String(target), "60"]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        for b in 0..<batches {
            try store.append(
                (0..<batchSize).map { j in
                    simpleEvent(
                        onboarding: j % 4, screen: j % 8, session: b * 10 + j % 10, time: Int64(b * batchSize + j + 1))
                })
            usleep(5_000)
        }
        child.waitUntilExit()
        let counts = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").map { Int($0)! }
        #expect(child.terminationStatus == 0)
        #expect(counts.last == target)
        #expect(counts == counts.sorted())
        // The reader ran alongside the writer: it saw intermediate states, not only the end.
        #expect(counts.count >= 3, "the reader saw only \(counts)")
        #expect(store.mapSize > 1 << 16)
    }

    /// A store opened with a 64 KiB map takes a million events: the map grows by itself.
    @Test func aTinyMapTakesAMillionEvents() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir, options: .init(durability: .noSync, initialMapSize: 1 << 16))
        let batchSize = 20_000
        // Cheap events: one string each (the session), built once; only the time changes.
        var batch = [Event](
            repeating: Event(time: Timestamp(microseconds: 0), session: "s", meta: nil, payload: .onboardingLoaded),
            count: batchSize)
        for b in 0..<(1_000_000 / batchSize) {
            for j in 0..<batchSize { batch[j].time = Timestamp(microseconds: Int64(b * batchSize + j)) }
            #expect(try store.append(batch).appended == batchSize)
        }
        #expect(try store.read { try $0.stats().events } == 1_000_000)
        // The map doubled at least seven times from 64 KiB (these events take about 10 MB).
        #expect(store.mapSize >= 8 << 20)
        #expect(store.usedBytes > 1 << 22)
        try store.read { s throws in
            #expect(try s.events(since: 999_999).map(\.event.time.microseconds) == [999_999])
            // The one session spans thousands of session-index values (format 4) and every block: read whole,
            // in time order (each event found by walking on in the block of the one before).
            var count: Int64 = 0
            var ordered = true
            try s.forEachEvent(inSession: "s") { view in
                ordered = ordered && view.time.microseconds == count
                count += 1
                return true
            }
            #expect(count == 1_000_000 && ordered)
        }
        #expect(try store.check().isOK)
    }
}

/// Damaged value bytes are reported by `check()` and by reads as errors, never traps.
@Suite struct CorruptionTests {
    enum Damage: String, CaseIterable, CustomStringConvertible {
        case garbageBody, truncatedBody, emptyBody, unknownStringID, versionBits, garbageBlock, truncatedBlock,
            sessionValue, batchValue,
            onboardingCounter
        var description: String { rawValue }
    }

    /// `block` (stored under `key`) rebuilt with the body of its first event replaced by `damage(body)`.
    static func rebuilt(_ block: [UInt8], key: EventKey, damage: ([UInt8]) -> [UInt8]) throws -> [UInt8] {
        try block.withUnsafeBytes { raw in
            var reader = try EventBlockReader(
                raw, firstTime: Layout.time(fromBits: key.timeBits), firstSeq: key.seq, checksumSeed: key.checksumSeed)
            var builder = EventBlockBuilder()
            builder.start(time: reader.firstTime, seq: reader.firstSeq)
            while try reader.next() {
                let body = reader.index == 1 ? damage(Array(reader.body)) : Array(reader.body)
                body.withUnsafeBytes { builder.append(time: reader.time, seq: reader.seq, body: $0) }
            }
            return builder.withBlock(checksumSeed: key.checksumSeed) { Array($0) }
        }
    }

    /// A store of 50 events over two onboardings and five screens, whose first block in key order (onboarding
    /// "onb-0", screen 0, from time 0 and seq 0, holding seqs 0, 10, 20, 30 and 40) or another value is then damaged
    /// as `damage` says (`nil`: none). The caller closes the store.
    static func damagedStore(_ damage: Damage?, at dir: String) throws -> Store {
        let store = try Store.open(at: dir, options: .foldingEveryBatch())
        try store.append(
            (0..<50).map {
                simpleEvent(onboarding: $0 % 2, screen: $0 % 5, session: $0 % 7, time: Int64($0), eventID: "e\($0)")
            })
        #expect(try store.check().isOK)

        let onb = try #require(try store.read { try $0.id(of: "onb-0") })
        let key = EventKey(onboarding: onb, screen: 0, timeBits: Layout.timeBits(0), seq: 0)
        let session = try #require(try store.read { try $0.id(of: "s0") })
        guard let damage else { return store }
        try store.env.transaction(write: true) { txn in
            let dbs = store.dbs
            func put(_ db: Database, _ k: [UInt8], _ v: [UInt8]) throws {
                try k.withUnsafeBytes { kb in try v.withUnsafeBytes { vb in _ = try txn.put(db, kb, vb) } }
            }
            var keyBytes = [UInt8](repeating: 0, count: Layout.eventKeySize)
            keyBytes.withUnsafeMutableBytes { key.write(to: $0.baseAddress!) }
            let block = try #require(try keyBytes.withUnsafeBytes { try txn.get(dbs.events, $0) }.map { Array($0) })
            switch damage {
            case .garbageBody:
                try put(
                    dbs.events, keyBytes, try Self.rebuilt(block, key: key) { _ in [0xFF, 0xFE, 0xFD, 0xFC, 0xFB] })
            case .truncatedBody:
                try put(dbs.events, keyBytes, try Self.rebuilt(block, key: key) { Array($0.dropLast()) })
            case .emptyBody: try put(dbs.events, keyBytes, try Self.rebuilt(block, key: key) { _ in [] })
            case .unknownStringID:
                // Same shape, but the last string reference points past the dictionary.
                try put(
                    dbs.events, keyBytes,
                    try Self.rebuilt(block, key: key) { body in
                        var damaged = body
                        damaged[damaged.count - 2] = 0x7F
                        return damaged
                    })
            case .versionBits:
                // The record tag's version bits flipped to 3: damage in a store, not a record of a newer format.
                try put(
                    dbs.events, keyBytes,
                    try Self.rebuilt(block, key: key) { body in
                        var damaged = body
                        damaged[0] = damaged[0] & 0x1F | 3 << 5
                        return damaged
                    })
            case .garbageBlock: try put(dbs.events, keyBytes, [0xFF, 0xFE, 0xFD, 0xFC, 0xFB])
            case .truncatedBlock: try put(dbs.events, keyBytes, Array(block.prefix(2)))
            case .sessionValue:
                // The first value of the session's bucket.
                let k: [UInt8] = try txn.withCursor(dbs.sessions) { c in
                    let found = try c.seekBucket(of: session)
                    #expect(found && c.key.be32(0) == session >> Layout.sessionBucketShift)
                    return Array(c.key)
                }
                try put(dbs.sessions, k, [1, 2, 3])
            case .batchValue:
                let k = [UInt8](repeating: 0, count: Layout.batchKeySize)
                #expect(try k.withUnsafeBytes { try txn.get(dbs.batches, $0) } != nil)
                try put(dbs.batches, k, [9, 9, 9])
            case .onboardingCounter:
                var k = [UInt8](repeating: 0, count: 4)
                k.withUnsafeMutableBytes { $0.baseAddress!.storeBE(onb, at: 0) }
                try put(dbs.onboardings, k, [UInt8](repeating: 0, count: OnboardingSummaryRecord.size))
            }
        }

        return store
    }

    @Test(arguments: Damage.allCases)
    func damageIsReported(_ damage: Damage) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Self.damagedStore(damage, at: dir)
        defer { store.close() }

        let report = try store.check()
        #expect(!report.isOK, "check() missed \(damage)")
        #expect(report.problemCount >= 1)
        switch damage {
        case .garbageBody, .truncatedBody, .emptyBody, .unknownStringID, .versionBits, .garbageBlock, .truncatedBlock:
            // A garbage block fails its checksum ("is damaged"); a truncated one is too short to hold one.
            let said = damage == .garbageBlock ? "is damaged" : "does not decode"
            #expect(report.problems.contains { $0.contains("seq 0") && $0.contains(said) }, "\(report)")
            if damage == .versionBits {
                // Named as a damaged tag, not as a record of a format this reader does not know.
                #expect(report.problems.contains { $0.contains("record tag") && $0.contains(": 3") }, "\(report)")
                #expect(!report.problems.contains { $0.contains("unsupported format version") }, "\(report)")
            }
            // Said once per problem, not once by check() and again by the error it wraps.
            #expect(
                report.problems.allSatisfy { $0.components(separatedBy: "does not decode").count <= 2 }, "\(report)")
            // Reads that touch the damaged record throw; they do not trap.
            let error = #expect(throws: StoreError.self) { try store.read { try $0.allEvents() } }
            #expect(error?.kind == .corrupt)
            #expect(throws: StoreError.self) { try store.read { try $0.events(inSession: "s0") } }
            #expect(throws: StoreError.self) { try store.read { try $0.events(since: 0) } }
            // Other onboardings are unaffected.
            #expect(try store.read { try $0.events(onboarding: "onb-1") }.count == 25)
        case .sessionValue:
            #expect(report.problems.contains { $0.hasPrefix("sessions:") }, "\(report)")
            #expect(throws: StoreError.self) { try store.read { try $0.events(inSession: "s0") } }
        case .batchValue:
            #expect(report.problems.contains { $0.hasPrefix("batches:") }, "\(report)")
            #expect(throws: StoreError.self) { try store.read { try $0.events(since: 0) } }
        case .onboardingCounter:
            #expect(report.problems.contains { $0.hasPrefix("onboardings:") }, "\(report)")
        }
    }
}

/// The free database's keys are transaction ids compared as native integers (`MDB_INTEGERKEY`): 1280 is bytes
/// `00 05 …`, which sorts before 1279 (`FF 04 …`) as bytes. The page walk compared them as bytes and reported a
/// healthy store as damaged once the free list held records on both sides of a multiple of 256.
@Test func checkPassesWhileTheFreeListHoldsTransactionIDsAcrossAMultipleOf256() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try Store.open(at: dir, options: Store.Options(durability: .noSync))
    for i in 0..<1_400 {
        _ = try store.append([
            simpleEvent(
                onboarding: i % 3, screen: i % 5, session: i / 20, time: 1_793_527_200_000_000 + Int64(i) * 1_000_000)
        ])
        // Transaction ids pass 256, 512, 768, 1024 and 1280 on the way.
        if i % 37 == 0 || (i >= 1_270 && i <= 1_290) {
            let report = try store.check()
            #expect(report.isOK, "after \(i + 1) appends: \(report)")
            if !report.isOK { return }
        }
    }
}

/// `Store.salvageEvents` reads past damage that stops every other read, and loses only what the damage took.
@Suite struct SalvageTests {
    @Test(arguments: CorruptionTests.Damage.allCases)
    func salvageLosesOnlyTheDamagedPart(_ damage: CorruptionTests.Damage) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try CorruptionTests.damagedStore(damage, at: dir)
        defer { store.close() }
        var seqs: [UInt64] = []
        var ids: [String] = []
        var damages: [SalvageDamage] = []
        try store.salvageEvents(
            { stored in
                seqs.append(stored.seq)
                ids.append(stored.event.eventID ?? "")
                return true
            },
            damaged: {
                damages.append($0); return true
            })
        // Event j has seq j and id "e<j>"; the damaged block holds seqs 0, 10, 20, 30 and 40.
        let lost: Set<UInt64>
        switch damage {
        case .garbageBody, .truncatedBody, .emptyBody, .unknownStringID, .versionBits:
            // The block's framing is whole: only its first event is lost.
            lost = [0]
            #expect(damages.count == 1 && damages.first?.extent == .event(seq: 0), "\(damages)")
        case .garbageBlock, .truncatedBlock:
            lost = [0, 10, 20, 30, 40]
            #expect(damages.count == 1 && damages.first?.extent == .block(firstSeq: 0, eventsRead: 0), "\(damages)")
        case .sessionValue, .batchValue, .onboardingCounter:
            // Values salvage does not read.
            lost = []
            #expect(damages.isEmpty, "\(damages)")
        }
        #expect(seqs.sorted() == (0..<50).filter { !lost.contains($0) }, "\(damage)")
        #expect(seqs.count == Set(seqs).count, "an event came twice")
        #expect(zip(seqs, ids).allSatisfy { "e\($0.0)" == $0.1 }, "an event came back with another's fields")
        // The damage is named: the block by its first seq, the event by its seq.
        if let first = damages.first {
            #expect(
                first.description.contains(first.extent == .event(seq: 0) ? "event seq 0 " : "the block at seq 0 "),
                "\(first)")
        }
    }

    enum BlockDamage: String, CaseIterable, CustomStringConvertible {
        case lastByteCut, byteAppended, shortKey, firstStringChunk
        var description: String { rawValue }
    }

    @Test(arguments: BlockDamage.allCases)
    func salvageOfFramingKeysAndStrings(_ damage: BlockDamage) throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try CorruptionTests.damagedStore(nil, at: dir)
        defer { store.close() }
        let onb = try #require(try store.read { try $0.id(of: "onb-0") })
        // The first block in key order holds seqs 0, 10, 20, 30 and 40 (CorruptionTests.damagedStore).
        var keyBytes = [UInt8](repeating: 0, count: Layout.eventKeySize)
        keyBytes.withUnsafeMutableBytes {
            EventKey(onboarding: onb, screen: 0, timeBits: Layout.timeBits(0), seq: 0).write(to: $0.baseAddress!)
        }
        try store.env.transaction(write: true) { txn in
            func put(_ db: Database, _ k: [UInt8], _ v: [UInt8]) throws {
                try k.withUnsafeBytes { kb in try v.withUnsafeBytes { vb in _ = try txn.put(db, kb, vb) } }
            }
            let block = try #require(
                try keyBytes.withUnsafeBytes { try txn.get(store.dbs.events, $0) }.map { Array($0) })
            // The framing damage comes with a checksum that matches (a writer's bug), so that salvage meets it
            // event by event; a changed byte under the old checksum costs the whole block (BlockChecksumTests).
            let key = EventKey(onboarding: onb, screen: 0, timeBits: Layout.timeBits(0), seq: 0)
            switch damage {
            case .lastByteCut: try put(store.dbs.events, keyBytes, resealed(Array(block.dropLast()), key: key))
            case .byteAppended: try put(store.dbs.events, keyBytes, resealed(block + [0], key: key))
            case .shortKey: try put(store.dbs.events, Array(keyBytes.dropLast()), block)
            case .firstStringChunk: try put(store.dbs.strings, [0, 0, 0, 0], [0xFF, 0xFF])
            }
        }
        var seqs: [UInt64] = []
        var damages: [SalvageDamage] = []
        try store.salvageEvents(
            {
                seqs.append($0.seq); return true
            },
            damaged: {
                damages.append($0); return true
            })
        switch damage {
        case .lastByteCut:
            // The fifth event's body is cut: the four before it are kept.
            #expect(damages.map(\.extent) == [.block(firstSeq: 0, eventsRead: 4)], "\(damages)")
            #expect(seqs.sorted() == (0..<50).filter { $0 != 40 })
        case .byteAppended:
            // Every event reads, but the block's length does not check: kept, and said to be unverified.
            #expect(damages.map(\.extent) == [.blockEnd(firstSeq: 0, eventsRead: 5)], "\(damages)")
            #expect(damages.allSatisfy { !$0.lostEvents })
            #expect(seqs.sorted() == Array(0..<50))
        case .shortKey:
            // A second copy of the block under a key of 21 bytes: skipped, and the block itself read once.
            #expect(damages.map(\.extent) == [.key], "\(damages)")
            #expect(seqs.sorted() == Array(0..<50))
        case .firstStringChunk:
            // Every event names a string of the first chunk: each is skipped alone, none is lost unsaid.
            #expect(
                seqs.count + damages.count == 50 && !damages.isEmpty, "\(seqs.count) events, \(damages.count) damages")
            #expect(damages.allSatisfy { if case .event = $0.extent { true } else { false } }, "\(damages)")
        }
    }

    @Test func stoppingEndsTheSalvage() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try CorruptionTests.damagedStore(.garbageBody, at: dir)
        defer { store.close() }
        var seen = 0
        try store.salvageEvents(
            { _ in
                seen += 1; return seen < 3
            }, damaged: { _ in true })
        #expect(seen == 3)
        var damages = 0
        seen = 0
        try store.salvageEvents(
            { _ in
                seen += 1; return true
            },
            damaged: { _ in
                damages += 1; return false
            })
        // The damaged event is the very first in key order: nothing comes after the stop.
        #expect(damages == 1 && seen == 0)
    }
}
