import type { FastifyReply } from 'fastify';

/** A file sent to be saved, never shown inline, and never kept by a cache on the way. */
export function sendDownload(
  reply: FastifyReply,
  file: { mimeType: string; fileName: string; content: Buffer },
): FastifyReply {
  return reply
    .type(file.mimeType)
    .header('Content-Disposition', `attachment; filename="${file.fileName}"`)
    .header('Cache-Control', 'private, no-store')
    .send(file.content);
}
