//! The protocol side of `teammem mcp`: initialize, list the tools, run a call. Each call runs
//! on tokio's blocking pool (the memory operations are synchronous file and git work), so
//! concurrent calls from one agent do not wait for each other's reads; writes are serialised
//! inside [`MemoryDoor`]. A panic in a call becomes an MCP error for that call, never the end
//! of the server.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, ListToolsResult, Meta,
    PaginatedRequestParams, ServerCapabilities, ServerInfo, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use super::schema;
use super::tools::{MemoryDoor, Timings, ToolError};
use crate::ops::OpError;

/// The MCP server: a door to one project's memories.
#[derive(Clone)]
pub struct MemoryServer {
    door: Arc<MemoryDoor>,
    /// Whether each `memory_search` result carries where its time went
    /// (`TEAMMEM_MCP_TIMINGS=1`, for `scripts/bench-mcp.py`).
    timings: bool,
}

impl MemoryServer {
    /// A server in front of `door`.
    pub fn new(door: Arc<MemoryDoor>) -> MemoryServer {
        MemoryServer {
            door,
            timings: std::env::var("TEAMMEM_MCP_TIMINGS").is_ok_and(|v| v == "1"),
        }
    }
}

/// The `_meta` of a result that says where a search spent its time, in microseconds.
fn timings_meta(t: &Timings) -> Meta {
    let mut map = serde_json::Map::new();
    map.insert(
        "teammem/timings".to_string(),
        serde_json::json!({
            "ranking_us": t.ranking_us,
            "gate_us": t.gate_us,
            "freshness_us": t.freshness_us,
            "encoding_us": t.encoding_us,
        }),
    );
    Meta(map)
}

fn tool_list() -> Vec<Tool> {
    schema::tools()
        .into_iter()
        .map(|(name, description, read_only)| {
            let schema = match schema::input_schema(name) {
                serde_json::Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            let annotations = ToolAnnotations::new()
                .read_only(read_only)
                .destructive(name == "memory_forget");
            Tool::new(name, description, Arc::new(schema)).with_annotations(annotations)
        })
        .collect()
}

impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("teammem", env!("CARGO_PKG_VERSION")))
            .with_instructions(schema::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let door = Arc::clone(&self.door);
        let name = request.name.to_string();
        let arguments = request.arguments;
        let ran = tokio::task::spawn_blocking(move || {
            catch_unwind(AssertUnwindSafe(|| door.call(&name, arguments)))
        })
        .await;
        match ran {
            Ok(Ok(Ok(reply))) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(reply.text)]);
                if let (true, Some(t)) = (self.timings, reply.timings) {
                    result.meta = Some(timings_meta(&t));
                }
                Ok(result)
            }
            Ok(Ok(Err(ToolError::BadInput(msg)))) => Err(ErrorData::invalid_params(msg, None)),
            Ok(Ok(Err(ToolError::Refused(msg)))) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(msg)]))
            }
            Ok(Err(_)) | Err(_) => Err(ErrorData::internal_error(
                "teammem failed on this call (please report it); the server keeps running",
                None,
            )),
        }
    }
}

/// Runs `work` on `door` on a thread of its own; without a thread, the first call does it.
fn warm(door: &Arc<MemoryDoor>, name: &str, work: fn(&MemoryDoor)) {
    let door = Arc::clone(door);
    let _ = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || work(&door));
}

/// Serves `door` over stdin and stdout until the client closes the connection. What the first
/// search needs is prepared at once, beside the handshake, on threads of their own (recall's
/// indexes in memory, the gate's policy, every memory's last commit), so that neither waits
/// for the other.
pub fn serve(door: MemoryDoor) -> Result<(), OpError> {
    let door = Arc::new(door);
    warm(&door, "teammem-warm-recall", MemoryDoor::warm_recall);
    warm(&door, "teammem-warm-gate", MemoryDoor::warm_gate);
    warm(&door, "teammem-warm-history", MemoryDoor::warm_freshness);
    // Each turn's hook asks this server whether its recall index still holds.
    let _vouching = door.vouch_for_turns();
    let runtime = tokio::runtime::Builder::new_current_thread()
        // rmcp times the initialize handshake.
        .enable_time()
        .build()
        .map_err(|e| OpError::Usage(format!("cannot start the MCP server: {e}")))?;
    let served = Arc::clone(&door);
    let ended = runtime.block_on(async move {
        let running = MemoryServer::new(served)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| OpError::Usage(format!("MCP session did not start: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| OpError::Usage(format!("MCP session ended with an error: {e}")))?;
        Ok(())
    });
    door.flush_reads();
    ended
}
