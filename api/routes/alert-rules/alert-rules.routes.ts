import { NotFoundError, ValidationError } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { MANAGE_READ_ACCESS, MANAGE_WRITE_ACCESS } from '../../http/auth.ts';
import { idParam, type RouteTable } from '../../http/routes.ts';
import { lockSiteObject } from '../../http/site-object.queries.ts';
import { enforceBound } from '../../../shared/tenancy/bounds.ts';
import { audit, diff } from '../../http/audit.ts';
import { DeletedSchema } from '../../http/common.schema.ts';
import type { ManageDeps } from '../../http/deps.ts';
import {
  deleteAlertRule,
  insertAlertRule,
  listAlertRules,
  updateAlertRule,
  type AlertRuleRow,
} from './alert-rules.queries.ts';
import {
  AlertRuleCreateSchema,
  AlertRuleListSchema,
  AlertRulePatchSchema,
  AlertRuleSchema,
  type AlertRulePatch,
} from './alert-rules.schema.ts';

const NOT_FOUND = 'alert rule not found';

/** The record as returned: the page pattern in both spellings the spec uses. */
export function presentAlertRule(
  r: AlertRuleRow,
  heldBack: { page: string; since: string; reason: string | null }[] = [],
) {
  return {
    held_back: heldBack,
    id: r.id,
    site_id: r.site_id,
    name: r.name,
    trigger_type: r.trigger_type,
    threshold: r.threshold,
    cooldown_minutes: r.cooldown_minutes,
    channels: r.channels,
    config: { page_pattern: r.page_pattern },
    page_pattern: r.page_pattern,
    slack_channel: r.slack_channel,
    enabled: r.enabled,
    last_fired_at: r.last_fired_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/** Column values of a PATCH: `config.page_pattern` lands in the one `page_pattern` column. */
function patchColumns(p: AlertRulePatch) {
  const { config, page_pattern, ...rest } = p;
  const pattern = page_pattern !== undefined ? page_pattern : config?.page_pattern;
  return { ...rest, ...(pattern !== undefined ? { page_pattern: pattern } : {}) };
}

/**
 * An email channel on an instance that cannot send mail would accept the rule and fail every alert: refused where it
 * is chosen, naming the setting.
 */
function refuseEmailWithoutSmtp(deps: ManageDeps, channels: readonly string[] | undefined): void {
  if (!deps.mailer && channels?.includes('email')) {
    throw new ValidationError('the email channel needs SMTP_URL set on this Friction instance', [
      {
        path: 'channels',
        message:
          'email is not available: SMTP_URL is not set (choose webhook, slack, pagerduty or mcp, or configure SMTP)',
      },
    ]);
  }
}

/** Alert rules under /v1/manage/alert-rules and the short forms POST /v1/alert-rules, PATCH and DELETE /v1/alert-rules/:id. */
export function alertRuleRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  const write = MANAGE_WRITE_ACCESS;

  table.read({
    path: '/v1/manage/alert-rules',
    tag: 'alert-rules',
    summary: 'Alert rules of a site',
    access: MANAGE_READ_ACCESS,
    response: AlertRuleListSchema,
    async handler(_ctx, { query }) {
      const rules = await listAlertRules(deps.db, query.site_id);
      // Pages where a rule is held back for flapping (processor/alerts/rules.ts): the rule says so.
      const held =
        rules.length === 0
          ? []
          : await deps.db
              .selectFrom('alert_rule_states')
              .select(['rule_id', 'page', 'held_back_since', 'held_back_reason'])
              .where(
                'rule_id',
                'in',
                rules.map((r) => r.id),
              )
              .where('held_back_since', 'is not', null)
              .orderBy('page')
              .execute();
      return {
        site_id: query.site_id,
        alert_rules: rules.map((r) =>
          presentAlertRule(
            r,
            held
              .filter((h) => h.rule_id === r.id)
              .map((h) => ({ page: h.page, since: h.held_back_since!.toISOString(), reason: h.held_back_reason })),
          ),
        ),
      };
    },
  });

  for (const path of ['/v1/manage/alert-rules', '/v1/alert-rules']) {
    table.add({
      method: 'post',
      path,
      tag: 'alert-rules',
      status: 201,
      access: write,
      summary: path.startsWith('/v1/manage') ? 'Create an alert rule' : 'Create an alert rule (short form)',
      body: AlertRuleCreateSchema,
      siteBody: true,
      response: AlertRuleSchema,
      async handler(_ctx, { body, principal }) {
        refuseEmailWithoutSmtp(deps, body.channels);
        const pattern = body.page_pattern !== undefined ? body.page_pattern : (body.config?.page_pattern ?? null);
        return deps.db.transaction().execute(async (trx) => {
          await enforceBound(trx, 'alert_rules', body.site_id);
          const rule = await insertAlertRule(trx, {
            id: newId(),
            site_id: body.site_id,
            name: body.name ?? `${body.trigger_type} on ${pattern ?? 'every page'}`,
            trigger_type: body.trigger_type,
            threshold: body.threshold,
            cooldown_minutes: body.cooldown_minutes,
            channels: body.channels,
            page_pattern: pattern,
            slack_channel: body.slack_channel ?? null,
            enabled: body.enabled,
          });
          const { id, created_at, updated_at, last_fired_at, ...fields } = rule;
          await audit(trx, principal, {
            orgId: principal.orgId,
            siteId: rule.site_id,
            action: 'alert_rule.create',
            targetType: 'alert_rule',
            targetId: id,
            summary: fields,
          });
          return presentAlertRule(rule);
        });
      },
    });
  }

  for (const [path, param] of [
    ['/v1/manage/alert-rules/:rule_id', 'rule_id'],
    ['/v1/alert-rules/:rule_id', 'rule_id'],
  ] as const) {
    const short = !path.startsWith('/v1/manage');
    table.add({
      method: 'patch',
      path,
      tag: 'alert-rules',
      access: write,
      summary: `Update an alert rule${short ? ' (short form)' : ''}`,
      description: 'Any field of the rule but its site; `enabled: false` silences it without deleting it.',
      params: idParam(param),
      notFound: NOT_FOUND,
      body: AlertRulePatchSchema,
      response: AlertRuleSchema,
      async handler(_ctx, { params, body, principal, guard }) {
        const id = (params as Record<string, string>)[param];
        refuseEmailWithoutSmtp(deps, body.channels);
        return deps.db.transaction().execute(async (trx) => {
          const before = await lockSiteObject(trx, 'alert_rules', id);
          guard.site(before?.site_id, NOT_FOUND);
          const set = patchColumns(body);
          const after = await updateAlertRule(trx, id, { ...set, updated_at: deps.now() });
          await audit(trx, principal, {
            orgId: before!.org_id,
            siteId: after.site_id,
            action: 'alert_rule.update',
            targetType: 'alert_rule',
            targetId: id,
            summary: { changes: diff(before!, set) },
          });
          return presentAlertRule(after);
        });
      },
    });
    table.add({
      method: 'delete',
      path,
      tag: 'alert-rules',
      access: write,
      summary: `Delete an alert rule permanently${short ? ' (short form)' : ''}`,
      description: 'Its past alerts stay (their rule_name is kept). PATCH enabled:false silences a rule instead.',
      params: idParam(param),
      notFound: NOT_FOUND,
      response: DeletedSchema,
      async handler(_ctx, { params, principal, guard }) {
        const id = (params as Record<string, string>)[param];
        await deps.db.transaction().execute(async (trx) => {
          const rule = await lockSiteObject(trx, 'alert_rules', id);
          guard.site(rule?.site_id, NOT_FOUND);
          if (!rule) throw new NotFoundError(NOT_FOUND);
          await deleteAlertRule(trx, id);
          await audit(trx, principal, {
            orgId: rule.org_id,
            siteId: rule.site_id,
            action: 'alert_rule.delete',
            targetType: 'alert_rule',
            targetId: id,
            summary: { name: rule.name, trigger_type: rule.trigger_type },
          });
        });
        return { id, deleted: true as const };
      },
    });
  }
  return table;
}
