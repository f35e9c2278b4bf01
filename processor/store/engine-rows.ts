/** A stored event row as the engine reads it (the start-up rebuild, the recompute check). */
export const engineEventOf = (
  siteId: string,
  r: {
    id: string;
    session_id: string;
    type: string;
    ts: Date;
    page: string;
    signal: string | null;
    selector?: string | null;
    label?: string | null;
  },
) => ({
  id: r.id,
  siteId,
  sessionId: r.session_id,
  type: r.type as 'page_view' | 'signal',
  ts: new Date(r.ts).getTime(),
  page: r.page,
  signal: r.signal ?? undefined,
  selector: r.selector ?? undefined,
  label: r.label ?? undefined,
});
