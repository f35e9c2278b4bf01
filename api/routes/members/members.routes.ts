import { ConflictError, ForbiddenError, UnavailableError } from '../../../shared/errors.ts';
import { invitationMail } from '../../../shared/mail/account-mail.ts';
import { findOrg } from '../../../shared/db/queries/accounts.queries.ts';
import { hashApiKey, newId, randomToken } from '../../../shared/ids.ts';
import { ADMIN_ROLES, ALL_ROLES, OWNER_ROLES, type Principal } from '../../http/auth.ts';
import { idParam, type RouteTable } from '../../http/routes.ts';
import { enforceBound } from '../../../shared/tenancy/bounds.ts';
import { audit } from '../../http/audit.ts';
import { DeletedSchema, OrgQuerySchema } from '../../http/common.schema.ts';
import type { ManageDeps } from '../../http/deps.ts';
import {
  deleteMember,
  findMemberByEmail,
  findMemberForUpdate,
  insertInvitation,
  listMembers,
  lockOrgForInvitations,
  revokeInvitation,
  revokePendingInvitations,
  setMemberRole,
} from './members.queries.ts';
import { findPendingInvitation, listPendingInvitations } from '../../../shared/db/queries/invitations.queries.ts';
import {
  InviteCreatedSchema,
  MemberInviteAliasSchema,
  MemberInviteSchema,
  MemberListSchema,
  MemberPatchSchema,
  MemberSchema,
} from './members.schema.ts';

const NOT_FOUND = 'member not found';
/** An invitation is redeemable for a week. */
const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;

const presentInvite = (i: { id: string; email: string; role: string; created_at: Date; expires_at: Date }) => ({
  id: i.id,
  email: i.email,
  role: i.role,
  created_at: i.created_at.toISOString(),
  expires_at: i.expires_at.toISOString(),
});

/**
 * Members: list, invite (owner or admin; `owner` is never granted by invite), change role and remove
 * (owner only; nobody changes or removes themselves). User tokens only: membership is a matter between people.
 */
export function memberRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  const selfId = (p: Principal) => (p.kind === 'user' ? p.userId : null);

  table.add({
    method: 'get',
    path: '/v1/manage/members',
    tag: 'members',
    summary: 'Members of the organization and pending invitations',
    access: { surface: 'manage', scopes: [], roles: ALL_ROLES },
    query: OrgQuerySchema,
    response: MemberListSchema,
    async handler(_ctx, { query, guard }) {
      guard.org(query.org_id, 'organization not found');
      const [members, invitations] = await Promise.all([
        listMembers(deps.db, query.org_id),
        listPendingInvitations(deps.db, query.org_id, deps.now()),
      ]);
      return {
        org_id: query.org_id,
        members: members.map((m) => ({
          id: m.id,
          user_id: m.user_id,
          email: m.email,
          role: m.role,
          created_at: m.created_at.toISOString(),
        })),
        invitations: invitations.map(presentInvite),
      };
    },
  });

  for (const [path, schema] of [
    ['/v1/manage/members', MemberInviteSchema],
    ['/v1/manage/members/invite', MemberInviteAliasSchema],
  ] as const) {
    table.add({
      method: 'post',
      path,
      tag: 'members',
      status: 201,
      summary: path.endsWith('/invite')
        ? "Invite a member (alias; org_id defaults to the token's org)"
        : 'Invite a member',
      description:
        'With SMTP configured the invite token is mailed to the address and the answer holds none (invite_token: null): only whoever reads that mailbox can redeem it, which proves the address. ' +
        'Without SMTP the token is in the answer, to pass on to the invitee. It is redeemed at POST /v1/auth/accept-invite within 7 days. Inviting the same email again replaces the pending invitation; an existing member is 409.',
      access: { surface: 'manage', scopes: [], roles: ADMIN_ROLES },
      body: schema,
      response: InviteCreatedSchema,
      async handler(_ctx, { body, principal, guard }) {
        const orgId = body.org_id ?? principal.orgId;
        guard.org(orgId, 'organization not found');
        const now = deps.now();
        return deps.db.transaction().execute(async (trx) => {
          await lockOrgForInvitations(trx, orgId);
          if (await findMemberByEmail(trx, orgId, body.email))
            throw new ConflictError('this email is already a member of the organization');
          await revokePendingInvitations(trx, orgId, body.email, now);
          await enforceBound(trx, 'invitations', orgId, now);
          // Random like an API key, so stored the same way: only its SHA-256 (hashApiKey), shown once.
          const token = `inv_${randomToken(32)}`;
          const invitation = await insertInvitation(trx, {
            id: newId(),
            orgId,
            email: body.email,
            role: body.role,
            tokenHash: hashApiKey(token),
            invitedBy: selfId(principal),
            expiresAt: new Date(now.getTime() + INVITE_TTL_MS),
          });
          await audit(trx, principal, {
            orgId,
            siteId: null,
            action: 'member.invite',
            targetType: 'invitation',
            targetId: invitation.id,
            summary: { email: body.email, role: body.role, mailed: deps.mailer !== null },
          });
          if (deps.mailer) {
            // Sent before the commit: an invitation that could not be mailed does not exist (503, retry).
            const org = await findOrg(trx, orgId);
            await deps.mailer
              .send(
                invitationMail(body.email, {
                  orgName: org?.name ?? '',
                  role: body.role,
                  token,
                  baseUrl: deps.publicBaseUrl,
                  invitedBy: principal.label,
                }),
              )
              .catch((err) => {
                throw new UnavailableError('the mail server did not accept the invitation; retry shortly', 30, err);
              });
            return {
              invitation: presentInvite(invitation),
              invite_token: null,
              mailed: true,
              accept_path: '/v1/auth/accept-invite' as const,
            };
          }
          return {
            invitation: presentInvite(invitation),
            invite_token: token,
            mailed: false,
            accept_path: '/v1/auth/accept-invite' as const,
          };
        });
      },
    });
  }

  table.add({
    method: 'patch',
    path: '/v1/manage/members/:member_id',
    tag: 'members',
    summary: "Change a member's role (owner only; not your own)",
    access: { surface: 'manage', scopes: [], roles: OWNER_ROLES },
    params: idParam('member_id'),
    notFound: NOT_FOUND,
    body: MemberPatchSchema,
    response: MemberSchema,
    async handler(_ctx, { params, body, principal, guard }) {
      return deps.db.transaction().execute(async (trx) => {
        const m = await findMemberForUpdate(trx, params.member_id);
        guard.org(m?.org_id, NOT_FOUND);
        if (m!.user_id === selfId(principal)) throw new ForbiddenError('you cannot change your own role');
        if (m!.role !== body.role) {
          await setMemberRole(trx, m!.id, body.role, deps.now());
          await audit(trx, principal, {
            orgId: m!.org_id,
            siteId: null,
            action: 'member.update',
            targetType: 'member',
            targetId: m!.id,
            summary: { email: m!.email, changes: { role: { from: m!.role, to: body.role } } },
          });
        }
        return {
          id: m!.id,
          user_id: m!.user_id,
          email: m!.email,
          role: body.role,
          created_at: m!.created_at.toISOString(),
        };
      });
    },
  });

  table.add({
    method: 'delete',
    path: '/v1/manage/members/:member_id',
    tag: 'members',
    summary: 'Remove a member or cancel a pending invitation (owner only; not yourself)',
    description: "A removed member's tokens stop working at once.",
    access: { surface: 'manage', scopes: [], roles: OWNER_ROLES },
    params: idParam('member_id'),
    notFound: NOT_FOUND,
    response: DeletedSchema,
    async handler(_ctx, { params, principal, guard }) {
      const id = params.member_id;
      await deps.db.transaction().execute(async (trx) => {
        const m = await findMemberForUpdate(trx, id);
        if (m) {
          guard.org(m.org_id, NOT_FOUND);
          if (m.user_id === selfId(principal)) throw new ForbiddenError('you cannot remove yourself');
          await deleteMember(trx, id);
          await audit(trx, principal, {
            orgId: m.org_id,
            siteId: null,
            action: 'member.remove',
            targetType: 'member',
            targetId: id,
            summary: { email: m.email, role: m.role },
          });
          return;
        }
        const invite = await findPendingInvitation(trx, { id }, deps.now());
        guard.org(invite?.org_id, NOT_FOUND);
        await revokeInvitation(trx, id, deps.now());
        await audit(trx, principal, {
          orgId: invite!.org_id,
          siteId: null,
          action: 'member.invite_cancel',
          targetType: 'invitation',
          targetId: id,
          summary: { email: invite!.email, role: invite!.role },
        });
      });
      return { id, deleted: true as const };
    },
  });
  return table;
}
