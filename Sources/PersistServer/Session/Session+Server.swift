import Foundation
import PersistKit

extension Session {
    /// `hello`, `model`, `ping` and `stats`: answers that need no context.
    func serverOp(_ request: WireRequest) throws(WireError) -> JSON {
        switch request.op {
        case "hello":
            let store = state.store
            return .object([
                "protocol": .integer(1),
                "server": .string("persistd/\(ServerState.version)"),
                "store": .object(["type": .string(store?.type.rawValue ?? ""), "uuid": .string(store?.identifier ?? "")]),
                "entities": .array(state.container.managedObjectModel.entities.map(\.name).sorted().map(JSON.string)),
                "limits": .object([
                    "maxLineBytes": .integer(Int64(state.configuration.maximumLineLength)),
                    "maxQueuedRequests": .integer(Int64(state.configuration.maximumQueuedRequests)),
                    "idleTimeout": .double(state.configuration.idleTimeout),
                ]),
            ])
        case "model":
            return state.modelJSON
        case "ping":
            return .object(["pong": .bool(true)])
        default:
            let statistics = state.statistics
            let uptime = Date().timeIntervalSince(state.startTime)
            return .object([
                "connections": .integer(Int64(statistics.openConnections.load(ordering: .relaxed))),
                "connectionsAccepted": .integer(Int64(statistics.acceptedConnections.load(ordering: .relaxed))),
                "requestsServed": .integer(Int64(statistics.requestsServed.load(ordering: .relaxed))),
                "saves": .integer(Int64(statistics.saves.load(ordering: .relaxed))),
                "storeSize": .integer(state.storeSize),
                "uptime": .double((uptime * 1000).rounded() / 1000),
            ])
        }
    }
}
