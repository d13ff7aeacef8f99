/** GET /api/ip: the address this app limits the caller by. Only proxy.ts's site-wide limit applies. */
import { clientIp } from '../../../client-ip';

export function GET(request: Request) {
  return Response.json({ ip: clientIp(request) ?? null });
}
