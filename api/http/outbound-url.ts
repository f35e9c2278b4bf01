import { ValidationError } from '../../shared/errors.ts';
import { checkOutboundUrl, OutboundRefusedError, type OutboundPolicy } from '../../shared/net/outbound.ts';

/**
 * Create/update-time SSRF check of a URL the service will call later (webhook endpoint, site URL for screenshots):
 * a 400 naming the field, before anything is stored. The delivery-time guard checks again and pins the address.
 */
export async function assertOutboundUrl(url: string | undefined, policy: OutboundPolicy, field = 'url'): Promise<void> {
  if (url === undefined) return;
  try {
    await checkOutboundUrl(url, policy);
  } catch (err) {
    if (!(err instanceof OutboundRefusedError)) throw err;
    throw new ValidationError(`invalid body: ${field}: ${err.reason}`, [{ path: field, message: err.reason }]);
  }
}
