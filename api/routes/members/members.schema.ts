import { z } from 'zod';
import { INVITABLE_ROLES, ROLES } from '../../../shared/tenancy/accounts.ts';
import { EmailSchema } from '../../http/common.schema.ts';
import { Timestamp } from '../../http/common.schema.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';

export const MemberInviteSchema = z.strictObject({ org_id: Uuid(), email: EmailSchema, role: z.enum(INVITABLE_ROLES) });
/** `/manage/members/invite` (the other reference) names only email and role: the org defaults to the token's. */
export const MemberInviteAliasSchema = MemberInviteSchema.partial({ org_id: true });
export const MemberPatchSchema = z.strictObject({ role: z.enum(ROLES) });

export const MemberSchema = z.object({
  id: Uuid(),
  user_id: Uuid(),
  email: z.string(),
  role: z.enum(ROLES),
  created_at: Timestamp,
});
export const InvitationSchema = z.object({
  id: Uuid(),
  email: z.string(),
  role: z.enum(INVITABLE_ROLES),
  created_at: Timestamp,
  expires_at: Timestamp,
});
export const MemberListSchema = z.object({
  org_id: Uuid(),
  members: z.array(MemberSchema),
  invitations: z.array(InvitationSchema).describe('pending invitations'),
});
export const InviteCreatedSchema = z.object({
  invitation: InvitationSchema,
  invite_token: z
    .string()
    .nullable()
    .describe(
      'shown once: the invitee redeems it at POST /v1/auth/accept-invite; null when it was mailed to the address (SMTP configured)',
    ),
  mailed: z.boolean().describe('true: the token went to the invited address by mail'),
  accept_path: z.literal('/v1/auth/accept-invite'),
});
